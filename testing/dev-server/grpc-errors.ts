// What the dev server kit reads from gRPC failures: the status code, and a message for any thrown value.

export const GRPC_NOT_FOUND = 5;
export const GRPC_ALREADY_EXISTS = 6;

export function grpcCode(error: unknown): number | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'number' ? code : undefined;
}

export function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

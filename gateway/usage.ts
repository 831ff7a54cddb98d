// What `claude-temporal-orchestrator-gateway --help` (and `claude-temporal-orchestrator gateway --help`) prints: on its
// own, so the CLI shows it without loading the gateway.
export const GATEWAY_USAGE = `usage: claude-temporal-orchestrator-gateway [--help] [--version]
       claude-temporal-orchestrator gateway

The HTTP/SSE gateway and its chat page, until SIGINT/SIGTERM. Configured by environment:

  GATEWAY_TOKEN                         one bearer token (at least 16 characters): principal "default", an admin
  GATEWAY_TOKENS                        JSON { "<token>": { "principal": "alice", "admin": false } } (or
  GATEWAY_TOKENS_FILE                   a file of the same); at least one token in all
  GATEWAY_HOST, GATEWAY_PORT            where it listens (127.0.0.1, 8080)
  GATEWAY_MAX_BODY_BYTES, GATEWAY_MAX_STREAMS_PER_TOKEN, GATEWAY_MAX_STREAMS_PER_CONVERSATION,
  GATEWAY_MAX_STREAM_BUFFER_BYTES       limits (1,000,000 bytes; 16; 8; 1 MiB)
  TEMPORAL_ADDRESS, TEMPORAL_NAMESPACE, TEMPORAL_TASK_QUEUE   as for the worker (localhost:7233, default,
                                        claude-conversations)
  TEMPORAL_API_KEY, TEMPORAL_TLS, TEMPORAL_TLS_CLIENT_CERT_PATH, TEMPORAL_TLS_CLIENT_KEY_PATH,
  TEMPORAL_TLS_SERVER_CA_CERT_PATH, TEMPORAL_TLS_SERVER_NAME   Temporal Cloud or a TLS server, as for the worker
  TEMPORAL_UI_URL                       the Web UI as a browser reaches it (the chat page links conversations there)
  PAYLOAD_ENCRYPTION_KEYS               the workers' keys, when they encrypt payloads`;

// A TLS front for the test run's dev server, as Temporal Cloud is to a client: `temporal server start-dev` serves
// plain gRPC only, so this terminates TLS (a private CA's certificate for `temporal.test`, client certificates
// required: mTLS) and passes each HTTP/2 stream on to the dev server, noting what each caller presented (its
// `authorization` header, its certificate's CN). Certificates: test-certificates.ts, made once per proxy.
import fs from 'node:fs';
import http2 from 'node:http2';
import type { TLSSocket } from 'node:tls';
import { makeTestCertificates } from './test-certificates';

/** What one gRPC call brought to the proxy. */
export interface ProxiedCall {
  path: string;
  authorization: string | undefined;
  clientCertCn: string | undefined;
}

export interface TlsProxy {
  /** host:port to connect to, with TLS. */
  address: string;
  /** The name on the server certificate (not the address's host: TEMPORAL_TLS_SERVER_NAME is needed). */
  serverName: string;
  /** PEM files: the CA that signed both certificates, and the client's certificate and key. */
  caCertPath: string;
  clientCertPath: string;
  clientKeyPath: string;
  calls: ProxiedCall[];
  close(): Promise<void>;
}

const SERVER_NAME = 'temporal.test';

export async function startTlsProxy(target: string): Promise<TlsProxy> {
  const certificates = makeTestCertificates(SERVER_NAME);
  const upstream = http2.connect(`http://${target}`);
  upstream.on('error', () => undefined); // a call in flight fails on its own stream
  const calls: ProxiedCall[] = [];
  const server = http2.createSecureServer({
    key: fs.readFileSync(certificates.serverKeyPath),
    cert: fs.readFileSync(certificates.serverCertPath),
    ca: fs.readFileSync(certificates.caCertPath),
    requestCert: true,
    rejectUnauthorized: true,
  });
  server.on('stream', (stream, headers) => {
    const socket = stream.session?.socket as TLSSocket | undefined;
    calls.push({
      path: String(headers[':path']),
      authorization: headers.authorization,
      clientCertCn: socket?.getPeerCertificate().subject?.CN as string | undefined,
    });
    const forwarded: http2.OutgoingHttpHeaders = {};
    for (const [name, value] of Object.entries(headers)) {
      if (!name.startsWith(':') || name === ':method' || name === ':path') forwarded[name] = value;
    }
    const request = upstream.request(forwarded);
    let trailers: http2.IncomingHttpHeaders = {};
    request.on('response', (responseHeaders) => {
      if (stream.destroyed) return;
      // A gRPC answer with no body carries its status in its headers ("trailers-only"): it ends there.
      if ('grpc-status' in responseHeaders) return stream.respond(responseHeaders, { endStream: true });
      stream.respond(responseHeaders, { waitForTrailers: true });
      request.pipe(stream);
    });
    request.on('trailers', (received) => (trailers = received));
    stream.on('wantTrailers', () => stream.sendTrailers(trailers));
    request.on('error', () => stream.destroy());
    stream.on('error', () => request.destroy());
    stream.on('close', () => request.close());
    stream.pipe(request);
  });
  server.on('sessionError', () => undefined);
  const sessions = new Set<http2.ServerHttp2Session>();
  server.on('session', (session) => {
    sessions.add(session);
    session.once('close', () => sessions.delete(session));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return {
    address: `127.0.0.1:${port}`,
    serverName: SERVER_NAME,
    caCertPath: certificates.caCertPath,
    clientCertPath: certificates.clientCertPath,
    clientKeyPath: certificates.clientKeyPath,
    calls,
    async close() {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      for (const session of sessions) session.destroy();
      await closed;
      upstream.close();
      certificates.remove();
    },
  };
}

// Free TCP ports for local servers: bind port 0 and let the OS pick. All the listeners of one call are held open
// together, so one call never hands out the same port twice. (Another process may still take a port between this
// returning and the server binding it: startDevServer then tries again with other ports.)
import net from 'node:net';

export async function freePorts(count: number, host = '127.0.0.1'): Promise<number[]> {
  const servers: net.Server[] = [];
  try {
    const ports: number[] = [];
    for (let i = 0; i < count; i++) {
      const server = net.createServer();
      servers.push(server);
      await new Promise<void>((resolve, reject) => {
        server.once('error', reject);
        server.listen({ port: 0, host, exclusive: true }, () => resolve());
      });
      const address = server.address();
      if (address === null || typeof address === 'string') throw new Error(`could not read a bound port on ${host}`);
      ports.push(address.port);
    }
    return ports;
  } finally {
    await Promise.all(servers.map((s) => new Promise<void>((resolve) => s.close(() => resolve()))));
  }
}

export async function freePort(host = '127.0.0.1'): Promise<number> {
  const [port] = await freePorts(1, host);
  if (port === undefined) throw new Error('no free port');
  return port;
}

/** True when something accepts TCP connections on host:port within timeoutMs. */
export async function isPortOpen(host: string, port: number, timeoutMs = 1000): Promise<boolean> {
  return await new Promise<boolean>((resolve) => {
    const socket = net.connect({ host, port });
    const done = (open: boolean): void => {
      socket.destroy();
      resolve(open);
    };
    socket.setTimeout(timeoutMs, () => done(false));
    socket.once('connect', () => done(true));
    socket.once('error', () => done(false));
  });
}

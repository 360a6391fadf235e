// A TCP proxy on loopback between the services and a server, to play a
// network partition: `cut()` drops every connection and refuses new ones
// (a partition), `heal()` lets them through again.
import { connect, createServer, type Server, type Socket } from 'node:net';

export class TcpProxy {
  readonly #open = new Set<Socket>();
  #partitioned = false;
  #port = 0;

  private constructor(private readonly server: Server) {}

  static async start(targetPort: number): Promise<TcpProxy> {
    const server = createServer();
    const proxy = new TcpProxy(server);
    server.on('connection', (client: Socket) => {
      proxy.#accept(client, targetPort);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const address = server.address();
    if (address === null || typeof address === 'string') throw new Error('proxy has no port');
    proxy.#port = address.port;
    return proxy;
  }

  get url(): string {
    return `nats://127.0.0.1:${this.#port}`;
  }

  /** Drops every connection and refuses new ones. */
  cut(): void {
    this.#partitioned = true;
    for (const socket of this.#open) socket.destroy();
  }

  heal(): void {
    this.#partitioned = false;
  }

  async stop(): Promise<void> {
    this.cut();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  #accept(client: Socket, targetPort: number): void {
    if (this.#partitioned) {
      client.destroy();
      return;
    }
    const upstream = connect(targetPort, '127.0.0.1');
    for (const socket of [client, upstream]) {
      this.#open.add(socket);
      socket.on('close', () => {
        this.#open.delete(socket);
      });
      socket.on('error', () => {
        client.destroy();
        upstream.destroy();
      });
    }
    client.pipe(upstream);
    upstream.pipe(client);
  }
}

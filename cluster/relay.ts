import net from 'node:net';

// A TCP relay on one link (a worker's path to PostgreSQL), in a process of its own: this machine's kernel
// has no netem qdisc, so a link's delay is added here. SIGUSR1 delays every chunk, both ways, by
// RELAY_DELAY_MS (order kept); SIGUSR2 ends the delay. Loss on the same link is dropped packets (nft).
// Usage: tsx cluster/relay.ts <listen host> <listen port> <target host> <target port> <local address>
// (the address it connects from, so that PostgreSQL tells its connections apart).

const [listenHost, listenPort, targetHost, targetPort, localAddress] = process.argv.slice(2);
const delayMs = Number(process.env.RELAY_DELAY_MS ?? 100);
let delaying = false;
process.on('SIGUSR1', () => (delaying = true));
process.on('SIGUSR2', () => (delaying = false));

/** Copies `from` to `to`, each chunk held back while the delay is on, in the order it came. */
function pipe(from: net.Socket, to: net.Socket): void {
  let due = 0;
  from.on('data', (chunk) => {
    if (!delaying && due <= Date.now()) {
      to.write(chunk);
      return;
    }
    due = Math.max(due, Date.now() + (delaying ? delayMs : 0));
    setTimeout(() => to.writable && to.write(chunk), due - Date.now());
  });
  from.on('end', () => setTimeout(() => to.end(), Math.max(0, due - Date.now())));
}

const server = net.createServer((client) => {
  const upstream = net.connect({ port: Number(targetPort), host: targetHost, localAddress });
  pipe(client, upstream);
  pipe(upstream, client);
  const close = () => {
    client.destroy();
    upstream.destroy();
  };
  client.on('error', close);
  upstream.on('error', close);
  client.on('close', close);
  upstream.on('close', close);
});
server.listen(Number(listenPort), listenHost, () => console.log(`relay ${listenHost}:${listenPort} -> ${targetHost}:${targetPort}`));

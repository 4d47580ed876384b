import { createSocket, type Socket } from 'node:dgram';
import type { AddressInfo } from 'node:net';

/**
 * A tiny authoritative DNS server over UDP (RFC 1035 wire format) for webhook SSRF tests: it
 * answers A queries from a table the test changes at will (TTL 0, so nothing is cached), AAAA
 * queries with an empty answer, and unknown names with NXDOMAIN. Point WEBHOOK_DNS_SERVERS at
 * `server` to make a live hostname resolve to an address of the test's choosing — and to change
 * that answer between endpoint creation and delivery (DNS rebinding).
 */
export class TestDnsServer {
  readonly records = new Map<string, string>();
  private constructor(private socket: Socket) {}

  static async start(): Promise<TestDnsServer> {
    const socket = createSocket('udp4');
    const dns = new TestDnsServer(socket);
    socket.on('message', (msg, rinfo) => {
      const reply = dns.answer(msg);
      if (reply) socket.send(reply, rinfo.port, rinfo.address);
    });
    await new Promise<void>((resolve) => socket.bind(0, '127.0.0.1', resolve));
    return dns;
  }

  get server(): string {
    return `127.0.0.1:${(this.socket.address() as AddressInfo).port}`;
  }

  private answer(msg: Buffer): Buffer | undefined {
    if (msg.length < 12) return undefined;
    let offset = 12;
    const labels: string[] = [];
    while (offset < msg.length && msg[offset] !== 0) {
      const len = msg[offset]!;
      labels.push(msg.subarray(offset + 1, offset + 1 + len).toString('ascii'));
      offset += len + 1;
    }
    const questionEnd = offset + 5; // zero label, QTYPE, QCLASS
    const qtype = msg.readUInt16BE(offset + 1);
    const name = labels.join('.').toLowerCase();
    const address = this.records.get(name);
    const header = Buffer.alloc(12);
    msg.copy(header, 0, 0, 2); // same id
    const rd = msg[2]! & 0x01;
    header[2] = 0x84 | rd; // QR=1, AA=1, RD copied
    header[3] = address === undefined ? 0x03 : 0x00; // NXDOMAIN or NOERROR
    header.writeUInt16BE(1, 4);
    const answers = address !== undefined && qtype === 1 ? 1 : 0;
    header.writeUInt16BE(answers, 6);
    const question = msg.subarray(12, questionEnd);
    if (!answers) return Buffer.concat([header, question]);
    const rr = Buffer.alloc(16);
    rr.writeUInt16BE(0xc00c, 0); // pointer to the question's name
    rr.writeUInt16BE(1, 2); // A
    rr.writeUInt16BE(1, 4); // IN
    rr.writeUInt32BE(0, 6); // TTL 0
    rr.writeUInt16BE(4, 10);
    address!.split('.').forEach((octet, i) => rr.writeUInt8(Number(octet), 12 + i));
    return Buffer.concat([header, question, rr]);
  }

  close(): Promise<void> {
    return new Promise((resolve) => this.socket.close(() => resolve()));
  }
}

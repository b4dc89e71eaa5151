// The loopback OpenAI-compatible server (spec/support/openaiServer.ts) in a process of its own, for the
// streaming measurement (bench/child/streaming.ts): a real provider never runs on its client's event loop,
// so the client's work after the request has gone out overlaps the server's, as it does in production.
// Prints its baseURL as one line, then serves until its standard input ends (its parent closed it or died).
import { byTurn, startOpenAiServer, type ServerTurn } from "../../spec/support/openaiServer.js";

const turn = JSON.parse(process.argv[2]!) as ServerTurn;
const server = await startOpenAiServer(byTurn([turn]));
process.stdout.write(`${server.baseURL}\n`);
process.stdin.resume();
process.stdin.on("end", () => void server.close().then(() => process.exit(0)));

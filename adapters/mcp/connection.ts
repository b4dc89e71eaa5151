// One MCP client connection, the runtime's way: opened on first use, opened again once when it dropped,
// closed by close(). Over the official SDK's stdio and Streamable HTTP transports.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import { CfWorkerJsonSchemaValidator } from "@modelcontextprotocol/sdk/validation/cfworker";
import { McpConnectionError } from "./errors.js";

/** A server run as a child process, spoken to over its stdin and stdout. */
export interface McpStdioServer {
  /** The server's name: the prefix of its tools' effect names and the taint origin `mcp:<name>`. Letters, digits, `_`, `-`. */
  name: string;
  /** The program to run (e.g. `node`, `npx`, `uvx`). */
  command: string;
  /** Its arguments. */
  args?: string[];
  /**
   * Variables added to the environment the SDK gives the child: only a safe default set of the parent's
   * (HOME, PATH, SHELL, TERM, USER, LOGNAME), never the rest of it (API keys included).
   */
  env?: Record<string, string>;
  /** The child's working directory (default: this process's). */
  cwd?: string;
}

/** A server reached over Streamable HTTP. */
export interface McpHttpServer {
  /** The server's name: the prefix of its tools' effect names and the taint origin `mcp:<name>`. Letters, digits, `_`, `-`. */
  name: string;
  /** The server's MCP endpoint, e.g. `http://127.0.0.1:3000/mcp`. */
  url: string | URL;
  /** Headers sent with every request (e.g. `Authorization`). */
  headers?: Record<string, string>;
}

/** An MCP server: a command to run (stdio) or a URL (Streamable HTTP). */
export type McpServer = McpStdioServer | McpHttpServer;

const CLIENT_INFO = { name: "loomwork", version: "0.1.0" };

/** The connection to one server: `client()` connects on first use and once more after a drop. */
export class McpConnection {
  private current: Promise<Client> | undefined;
  private closed = false;
  private connects = 0;

  constructor(private readonly server: McpServer) {}

  /** How many times a connection was opened (the first, and each reconnect). */
  get opened(): number {
    return this.connects;
  }

  /** The open client: the one already open, else a new connection (one attempt; a failure is McpConnectionError). */
  client(): Promise<Client> {
    if (this.closed) return Promise.reject(new McpConnectionError(this.server.name, "closed by close()."));
    this.current ??= this.connect();
    return this.current;
  }

  /** Closes the connection (a stdio server's process ends); a later call refuses. */
  async close(): Promise<void> {
    this.closed = true;
    const current = this.current;
    this.current = undefined;
    if (current) await current.then((client) => client.close()).catch(() => undefined);
  }

  private connect(): Promise<Client> {
    this.connects += 1;
    const client = new Client(CLIENT_INFO, { jsonSchemaValidator: new CfWorkerJsonSchemaValidator() });
    const attempt: Promise<Client> = client
      .connect(transportOf(this.server))
      .then(() => client)
      .catch((cause: unknown) => {
        if (this.current === attempt) this.current = undefined;
        throw new McpConnectionError(this.server.name, `could not connect (${messageOf(cause)}).`, { cause });
      });
    // A dropped connection (the process exited, the HTTP session ended) is forgotten: the next call reconnects.
    client.onclose = () => {
      if (this.current === attempt) this.current = undefined;
    };
    return attempt;
  }
}

function transportOf(server: McpServer): Transport {
  if ("url" in server) {
    return new StreamableHTTPClientTransport(new URL(server.url), {
      ...(server.headers ? { requestInit: { headers: server.headers } } : {}),
    });
  }
  return new StdioClientTransport({
    command: server.command,
    ...(server.args ? { args: server.args } : {}),
    ...(server.env ? { env: server.env } : {}),
    ...(server.cwd ? { cwd: server.cwd } : {}),
  });
}

export function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

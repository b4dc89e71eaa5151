// loomwork/mcp's error: the server could not be reached, or the connection dropped during a call.
import { ERROR_CODES } from "../../actors/constants.js";
import { LoomworkError } from "../../stores/errors.js";

/**
 * An MCP server could not be reached (`mcpTools()` listing its tools, or a call's connect and its one
 * reconnect), or its connection dropped while a call was in flight. A call that fails so fails its step:
 * the model reads this message as the tool's error. It is not retried by loomwork (the server may have
 * done the work before it died); add `capabilities.retry` for servers whose tools are idempotent.
 */
export class McpConnectionError extends LoomworkError {
  static override readonly name: string = "McpConnectionError";
  /** The server's name, as given to `mcpTools`. */
  readonly server: string;
  constructor(server: string, message: string, options?: { cause?: unknown }) {
    super(ERROR_CODES.mcpConnection, `MCP server "${server}": ${message}`, options);
    this.server = server;
  }
}

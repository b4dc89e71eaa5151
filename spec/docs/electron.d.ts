// The part of Electron's API the docs' desktop blocks use, with Electron's own signatures: Electron is not a
// dependency of this checkout (its install downloads a binary), so the blocks are type-checked against this
// subset. The signatures are copied from the electron.d.ts that the `electron` package publishes (41.7.1,
// read from `npm pack electron`, which fetches the package without running its install script); options and
// overloads the docs do not use are left out. Keep it to names the docs use.
declare module "electron" {
  interface MessageEvent {
    data: any;
    ports: MessagePortMain[];
  }
  export interface MessagePortMain extends NodeJS.EventEmitter {
    on(event: "message", listener: (messageEvent: MessageEvent) => void): this;
    off(event: "message", listener: (messageEvent: MessageEvent) => void): this;
    postMessage(message: any, transfer?: MessagePortMain[]): void;
    start(): void;
    close(): void;
  }
  export class MessageChannelMain {
    port1: MessagePortMain;
    port2: MessagePortMain;
  }
  export interface WebPreferences {
    preload?: string;
    contextIsolation?: boolean;
    sandbox?: boolean;
  }
  export interface RenderProcessGoneDetails {
    reason:
      | "clean-exit"
      | "abnormal-exit"
      | "killed"
      | "crashed"
      | "oom"
      | "launch-failed"
      | "integrity-failure"
      | "memory-eviction";
    exitCode: number;
  }
  export interface WebContents {
    postMessage(channel: string, message: any, transfer?: MessagePortMain[]): void;
    on(event: "did-finish-load", listener: () => void): this;
    on(event: "render-process-gone", listener: (event: Event, details: RenderProcessGoneDetails) => void): this;
  }
  export class BrowserWindow {
    constructor(options?: { width?: number; height?: number; webPreferences?: WebPreferences });
    webContents: WebContents;
    loadFile(filePath: string): Promise<void>;
  }
  export const contextBridge: {
    exposeInMainWorld(apiKey: string, api: any): void;
  };
  export const app: {
    whenReady(): Promise<void>;
    getPath(name: "home" | "appData" | "userData" | "temp" | "logs"): string;
  };
  export interface IpcRendererEvent {
    ports: MessagePort[];
  }
  export const ipcRenderer: {
    on(channel: string, listener: (event: IpcRendererEvent, ...args: any[]) => void): void;
  };
}

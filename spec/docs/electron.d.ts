// The part of Electron's API the docs' desktop blocks use, with Electron's own signatures (electron.d.ts
// of Electron 3x): Electron is not a dependency of this checkout (its install downloads a binary), so the
// blocks are type-checked against this subset. Keep it to names the docs use.
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
  export class BrowserWindow {
    constructor(options?: { width?: number; height?: number; webPreferences?: { preload?: string } });
    webContents: { postMessage(channel: string, message: any, transfer?: MessagePortMain[]): void };
  }
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

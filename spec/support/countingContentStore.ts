// A ContentStore wrapper that counts every call: "a resume makes ZERO content-store calls" is counted, not assumed.
import type { ContentInfo, ContentPutOptions, ContentStore } from "../../stores/types.js";

export class CountingContentStore implements ContentStore {
  readonly spiVersion: string;
  readonly sealsContent: boolean;
  calls = 0;
  puts = 0;
  constructor(readonly inner: ContentStore) {
    this.spiVersion = inner.spiVersion;
    this.sealsContent = inner.sealsContent;
  }
  put(bytes: Uint8Array, options?: ContentPutOptions) {
    this.calls++;
    this.puts++;
    return this.inner.put(bytes, options);
  }
  get(address: string, options?: ContentPutOptions) {
    this.calls++;
    return this.inner.get(address, options);
  }
  has(address: string) {
    this.calls++;
    return this.inner.has(address);
  }
  delete(address: string) {
    this.calls++;
    return this.inner.delete!(address);
  }
  deleteIfUntouchedSince(address: string, cutoff: number) {
    this.calls++;
    return this.inner.deleteIfUntouchedSince!(address, cutoff);
  }
  touchClock() {
    this.calls++;
    return this.inner.touchClock!();
  }
  list(): AsyncIterable<ContentInfo> {
    this.calls++;
    return this.inner.list();
  }
}

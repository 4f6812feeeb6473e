// Heap access. Views are made fresh for every access: the heap grows (st replaces its
// ArrayBuffer; mt's old SharedArrayBuffer views keep their old length). Text goes through a
// copy because TextDecoder rejects views of shared memory.
import { fail } from './errors.mjs';

const encoder = new TextEncoder();
const decoder = new TextDecoder('utf-8', { ignoreBOM: true }); // a leading U+FEFF is text, as C keeps it

export class Heap {
  constructor(M) {
    this.M = M;
  }
  get buffer() {
    return (this.M.wasmMemory ?? this.M.HEAPU8).buffer;
  }
  u8(ptr, n) {
    return new Uint8Array(this.buffer, ptr, n);
  }
  view(ptr, n) {
    return new DataView(this.buffer, ptr, n);
  }
  i32(ptr) {
    return new Int32Array(this.buffer, ptr, 1)[0];
  }
  u32(ptr) {
    return new Uint32Array(this.buffer, ptr, 1)[0];
  }
  f32s(ptr, n) {
    return new Float32Array(this.buffer, ptr, n);
  }
  malloc(n) {
    const ptr = this.M._malloc(Math.max(1, n)) >>> 0;
    if (!ptr) fail(`out of wasm memory allocating ${n} bytes`, 'SAC_ERR_NOMEM');
    return ptr;
  }
  free(ptr) {
    if (ptr) this.M._free(ptr);
  }
  cstring(ptr) {
    ptr >>>= 0; // pointers above 2 GB come back from exports as negative numbers
    if (!ptr) return '';
    const u8 = new Uint8Array(this.buffer);
    let end = ptr;
    while (u8[end] !== 0) end++;
    return decoder.decode(u8.slice(ptr, end));
  }
  text(ptr, len) {
    return len ? decoder.decode(new Uint8Array(this.buffer).slice(ptr, ptr + len)) : '';
  }
  /** Copies a string into the heap as UTF-8; returns [ptr, byteLength]. */
  string(s) {
    const bytes = encoder.encode(s);
    const ptr = this.malloc(bytes.length + 1);
    const dst = this.u8(ptr, bytes.length + 1);
    dst.set(bytes);
    dst[bytes.length] = 0;
    return [ptr, bytes.length];
  }
  /** Copies token ids into the heap as int32; returns the pointer. */
  ids(ids) {
    const ptr = this.malloc(ids.length * 4);
    new Int32Array(this.buffer, ptr, ids.length).set(ids);
    return ptr;
  }
}

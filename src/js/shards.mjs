// Split models: llama.cpp's gguf-split writes a model as <prefix>-00001-of-0000N.gguf … and
// every file holds some of the tensors. Given the name of any one shard (a URL or, in Node, a
// path), the names of all of them follow.
import { fail } from './errors.mjs';

const SHARD_NAME = /-(\d{5})-of-(\d{5})\.gguf(?=$|[?#])/;

/** The shard names of a split model's file name, in order, or null when the name is not one. */
export function shardNames(name) {
  const m = SHARD_NAME.exec(name);
  if (!m) return null;
  const [no, count] = [Number(m[1]), Number(m[2])];
  if (count < 1 || no < 1 || no > count) fail(`'${name}' names shard ${no} of ${count}, which cannot be`);
  const pad = (i) => String(i).padStart(5, '0');
  return Array.from({ length: count }, (_, i) =>
    name.slice(0, m.index) + `-${pad(i + 1)}-of-${m[2]}.gguf` + name.slice(m.index + m[0].length));
}

/**
 * The sources of a model: an array is the shards in order; a URL or path naming one shard of a
 * split model stands for all of them; anything else is one file.
 */
export function modelSources(source) {
  if (Array.isArray(source)) {
    if (source.length === 0) fail('the model source is an empty array (give the shards of a split model in order)');
    if (source.length > 65535) fail(`${source.length} shards: a split model has at most 65535`);
    return source;
  }
  const name = typeof source == 'string' ? source : source instanceof URL ? source.href : null;
  return (name !== null && shardNames(name)) || [source];
}

// Option checks shared by every call: each option's type and range is checked before it can
// reach C (where an int32 would wrap), and a name the call does not know is an error that lists
// the ones it does (so { max_tokens: 5 } cannot silently mean the default).
import { fail } from './errors.mjs';

export const INT32_MAX = 2 ** 31 - 1;

/**
 * Checks that `options` is undefined or an object whose every name is in `known`;
 * returns it ({} for undefined). `call` names the function in the message.
 */
export function optionsOf(options, known, call) {
  if (options === undefined) return {};
  if (options === null || typeof options != 'object' || Array.isArray(options))
    fail(`the options of ${call} must be an object, got ${options === null ? 'null' : Array.isArray(options) ? 'an array' : typeof options}`);
  for (const name of Object.keys(options))
    if (!known.includes(name))
      fail(`unknown option '${name}' for ${call}; the options are: ${known.join(', ')}`);
  return options;
}

/** An integer in [min, max] (max at most int32), or `fallback` when undefined; `hint` follows the range. */
export function int(name, value, fallback, min, max = INT32_MAX, hint = '') {
  if (value === undefined) return fallback;
  if (!(Number.isInteger(value) && value >= min && value <= max))
    fail(`${name} must be an integer >= ${min} and <= ${max}${hint}, got ${describe(value)}`);
  return value;
}

/** A finite number satisfying `ok`, or `fallback` when undefined; `requirement` says what ok means. */
export function number(name, value, fallback, ok, requirement) {
  if (value === undefined) return fallback;
  if (!(typeof value == 'number' && Number.isFinite(value) && ok(value)))
    fail(`${name} must be ${requirement}, got ${describe(value)}`);
  return value;
}

/** One of the strings `known`, or `fallback` when undefined; an unknown one is refused with the list. */
export function oneOf(name, value, fallback, known) {
  if (value === undefined) return fallback;
  if (!known.includes(value))
    fail(`${name} must be one of ${known.map((k) => `'${k}'`).join(', ')}, got ${describe(value)}`);
  return value;
}

export function bool(name, value, fallback = false) {
  if (value === undefined) return fallback;
  if (typeof value != 'boolean') fail(`${name} must be true or false, got ${describe(value)}`);
  return value;
}

/** An AbortSignal (also one from another realm, e.g. an iframe), or undefined. */
export function abortSignal(value) {
  if (value === undefined) return undefined;
  if (Object.prototype.toString.call(value) !== '[object AbortSignal]' || typeof value.throwIfAborted != 'function')
    fail(`signal must be an AbortSignal (e.g. new AbortController().signal), got ${describe(value)}`);
  return value;
}

/** Checks an array of token ids (int32); returns it. */
export function checkIds(ids, what = 'ids', orText = '') {
  if (typeof ids == 'string' || ids == null || typeof ids.length != 'number')
    fail(`${what} must be ${orText}an array of token ids, got ${typeof ids == 'string' ? 'a string' : describe(ids)}`);
  for (let i = 0; i < ids.length; i++)
    if (!Number.isInteger(ids[i]) || ids[i] < -0x80000000 || ids[i] > 0x7fffffff)
      fail(`${what}[${i}] is ${describe(ids[i])}, not a token id (an integer)`);
  return ids;
}

/** A value as a message quotes it: strings in quotes, 'an object', 'null', 5n. */
export function describe(value) {
  if (typeof value == 'string') return `'${value}'`;
  if (typeof value == 'bigint') return `${value}n`;
  if (value === null) return 'null';
  if (typeof value == 'object') return Object.prototype.toString.call(value).slice(8, -1).toLowerCase() === 'object'
    ? 'an object' : Object.prototype.toString.call(value).slice(8, -1);
  return String(value);
}

/**
 * UTF-8 byte counting, defined once: the storage limits (keys, values) and the engine's payload limits
 * (inputs, results, signals, state) measure the same way. Pure: no encoder, no allocation.
 */

/**
 * How many bytes `text` takes in UTF-8: exactly `new TextEncoder().encode(text).length`. A surrogate pair is
 * 4 bytes; a lone surrogate counts as the 3 bytes of the replacement character it is encoded as.
 */
export function utf8Bytes(text: string): number {
  let bytes = 0;
  for (let index = 0; index < text.length; index++) {
    const unit = text.charCodeAt(index);
    if (unit < 0x80) bytes += 1;
    else if (unit < 0x800) bytes += 2;
    else if (unit >= 0xd800 && unit <= 0xdbff && isLowSurrogate(text.charCodeAt(index + 1))) {
      bytes += 4;
      index++;
    } else bytes += 3;
  }
  return bytes;
}

function isLowSurrogate(unit: number): boolean {
  return unit >= 0xdc00 && unit <= 0xdfff;
}

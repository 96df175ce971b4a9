/**
 * Where JSON text goes wrong, for people: the offset, line and column of the first mistake and what was
 * expected there ("a value", "a comma or a closing brace", …). Browsers' own `JSON.parse` messages differ and
 * some no longer give a position, so the start dialog scans the text itself — a small recursive-descent
 * reader that only validates, called only once `JSON.parse` has already refused the text.
 */

export type JsonProblem = { offset: number; line: number; column: number; expected: string };

class Stop extends Error {
  constructor(
    readonly offset: number,
    readonly expected: string,
  ) {
    super(expected);
  }
}

/** The first mistake in `text`, or null if it is valid JSON. */
export function locateJsonError(text: string): JsonProblem | null {
  let index = 0;
  const space = () => {
    while (index < text.length && ' \t\n\r'.includes(text[index]!)) index++;
  };
  const fail = (expected: string): never => {
    throw new Stop(index, expected);
  };
  const literal = (word: string) => {
    if (text.startsWith(word, index)) index += word.length;
    else fail('a value');
  };
  const string = () => {
    index++;
    while (index < text.length) {
      const char = text[index]!;
      if (char === '"') {
        index++;
        return;
      }
      if (char === '\\') {
        const next = text[index + 1];
        if (next === 'u') {
          if (!/^[0-9a-fA-F]{4}$/.test(text.slice(index + 2, index + 6))) {
            index += 2;
            fail('four hex digits after \\u');
          }
          index += 6;
        } else if (next !== undefined && '"\\/bfnrt'.includes(next)) index += 2;
        else {
          index++;
          fail('a valid escape (\\" \\\\ \\/ \\b \\f \\n \\r \\t \\u)');
        }
      } else if (char < ' ') fail('no raw control characters inside a string (use \\n)');
      else index++;
    }
    fail('a closing quote');
  };
  const number = () => {
    const match = /^-?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?/.exec(text.slice(index));
    if (!match) fail('a value');
    index += match![0].length;
  };
  const value = (): void => {
    space();
    const char = text[index];
    if (char === '{') return object();
    if (char === '[') return array();
    if (char === '"') return string();
    if (char === 't') return literal('true');
    if (char === 'f') return literal('false');
    if (char === 'n') return literal('null');
    if (char === '-' || (char !== undefined && char >= '0' && char <= '9')) return number();
    fail(char === undefined ? 'a value, but the text ended' : 'a value');
  };
  const object = () => {
    index++;
    space();
    if (text[index] === '}') {
      index++;
      return;
    }
    for (;;) {
      space();
      if (text[index] !== '"')
        fail(text[index] === '}' ? 'another key (no trailing comma)' : 'a key in double quotes');
      string();
      space();
      if (text[index] !== ':') fail('a colon after the key');
      index++;
      value();
      space();
      if (text[index] === ',') {
        index++;
        continue;
      }
      if (text[index] === '}') {
        index++;
        return;
      }
      fail('a comma or a closing brace');
    }
  };
  const array = () => {
    index++;
    space();
    if (text[index] === ']') {
      index++;
      return;
    }
    for (;;) {
      value();
      space();
      if (text[index] === ',') {
        index++;
        space();
        if (text[index] === ']') fail('another value (no trailing comma)');
        continue;
      }
      if (text[index] === ']') {
        index++;
        return;
      }
      fail('a comma or a closing bracket');
    }
  };
  try {
    value();
    space();
    if (index < text.length) fail('the end of the text');
    return null;
  } catch (error) {
    if (!(error instanceof Stop)) throw error;
    const before = text.slice(0, error.offset);
    const line = before.split('\n').length;
    return {
      offset: error.offset,
      line,
      column: error.offset - before.lastIndexOf('\n'),
      expected: error.expected,
    };
  }
}

// `$(VAR)` expansion as the kubelet applies it to env values, command and args
// (kubernetes third_party/forked/golang/expansion): `$(NAME)` becomes the
// mapped value, `$$` becomes `$`, an unknown `$(NAME)` and an unclosed `$(`
// stay as written, any other `$x` is kept.

/** a lookup over the maps in order; an unknown name is written back as `$(name)` */
export function mappingFor(...maps: ReadonlyMap<string, string>[]): (name: string) => string {
  return (name) => {
    for (const m of maps) {
      const v = m.get(name);
      if (v !== undefined) return v;
    }
    return `$(${name})`;
  };
}

export function expand(input: string, mapping: (name: string) => string): string {
  let out = '';
  let checkpoint = 0;
  for (let cursor = 0; cursor < input.length; cursor++) {
    if (input[cursor] !== '$' || cursor + 1 >= input.length) continue;
    out += input.slice(checkpoint, cursor);
    const next = input[cursor + 1];
    let advance = 1;
    if (next === '$') out += '$';
    else if (next === '(') {
      const close = input.indexOf(')', cursor + 2);
      if (close < 0) out += '$(';
      else {
        out += mapping(input.slice(cursor + 2, close));
        advance = close - cursor;
      }
    } else out += `$${next}`;
    cursor += advance;
    checkpoint = cursor + 1;
  }
  return out + input.slice(checkpoint);
}

/** A pipeline's parameter, as its source declares it and a function lists it. */
export type Parameter = { refType?: string; secret?: boolean; description?: string; default?: unknown };

/**
 * The field of one argument: a choice for a boolean (left empty, it is not sent), a password field
 * for a secret, else text (read by `argsOf`).
 */
export function ArgumentInput({ parameter, value, onChange }: { parameter: Parameter; value: string; onChange: (value: string) => void }) {
  const hint = parameter.default !== undefined ? JSON.stringify(parameter.default) : parameter.description;
  if (parameter.refType === 'boolean') {
    return (
      <select value={value} onChange={(event) => onChange(event.target.value)}>
        <option value="">{parameter.default !== undefined ? `default (${hint})` : '(not given)'}</option>
        <option value="true">true</option>
        <option value="false">false</option>
      </select>
    );
  }
  return (
    <input
      type={parameter.secret ? 'password' : 'text'}
      autoComplete={parameter.secret ? 'off' : undefined}
      placeholder={hint}
      value={value}
      onChange={(event) => onChange(event.target.value)}
    />
  );
}

/** Typed arguments from the form's text: numbers, booleans and JSON parsed; an empty optional one left out. */
export function argsOf(parameters: Record<string, { refType?: string }>, values: Record<string, string>) {
  const args: Record<string, unknown> = {};
  for (const [name, parameter] of Object.entries(parameters)) {
    const text = values[name];
    if (text === undefined || text === '') continue;
    switch (parameter.refType) {
      case 'number':
        args[name] = Number(text);
        break;
      case 'boolean':
        args[name] = text === 'true';
        break;
      case 'json':
      case 'list':
      case 'record':
        try {
          args[name] = JSON.parse(text);
        } catch {
          args[name] = text;
        }
        break;
      default:
        args[name] = text;
    }
  }
  return args;
}

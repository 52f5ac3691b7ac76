import { NativeSelect, PasswordInput, TextInput } from '@mantine/core';

/** A pipeline's parameter, as its source declares it and a function lists it. */
export type Parameter = { refType?: string; secret?: boolean; description?: string; default?: unknown };

/** A value as a person would type it: a text as itself (never JSON-quoted), anything else as JSON. */
export const asTyped = (value: unknown) => (typeof value === 'string' ? value : JSON.stringify(value));

/**
 * The field of one argument, labelled with its name and type: a choice for a boolean (left empty,
 * it is not sent), a password field for a secret, else text (read by `argsOf`). A default shows as
 * the placeholder, as it would be typed; `error` is what the service said of it.
 */
export function ArgumentInput({
  name,
  parameter,
  value,
  onChange,
  error,
}: {
  name: string;
  parameter: Parameter;
  value: string;
  onChange: (value: string) => void;
  error?: string;
}) {
  const optional = parameter.default !== undefined;
  const hint = optional ? asTyped(parameter.default) : parameter.description;
  const description = `${parameter.refType ?? 'json'}${optional ? ', optional' : ''}${optional && parameter.description ? ` · ${parameter.description}` : ''}`;
  if (parameter.refType === 'boolean') {
    return (
      <NativeSelect
        label={name}
        description={description}
        value={value}
        onChange={(event) => onChange(event.currentTarget.value)}
        error={error}
        data={[
          { value: '', label: optional ? `default (${hint})` : '(not given)' },
          { value: 'true', label: 'true' },
          { value: 'false', label: 'false' },
        ]}
      />
    );
  }
  const Input = parameter.secret ? PasswordInput : TextInput;
  return (
    <Input
      label={name}
      description={description}
      autoComplete={parameter.secret ? 'off' : undefined}
      placeholder={hint}
      value={value}
      onChange={(event) => onChange(event.currentTarget.value)}
      error={error}
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

/** The models an agent job may use (`builtin` or those configured), as the API lists them: a select's options. */
export function ModelOptions({ models }: { models: readonly { id: string; description: string }[] | undefined }) {
  return models?.map((item) => (
    <option key={item.id} value={item.id}>
      {item.id}: {item.description}
    </option>
  ));
}

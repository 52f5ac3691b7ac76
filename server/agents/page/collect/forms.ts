import type { FormInput, PageForm } from '../pageModel.ts';
import { labelOf, nameOf } from './accessibleName.ts';
import { selectorOf } from './selector.ts';
import { clean } from './text.ts';
import { visible } from './visible.ts';

/** Every form of the page, with its visible fields and submit controls. Field values are never read: only whether one is there. */
export function readForms(): PageForm[] {
  const forms: PageForm[] = [];
  for (const form of document.querySelectorAll('form')) {
    const inputs = [...form.querySelectorAll('input, select, textarea')]
      .filter((input) => !['hidden', 'submit', 'button', 'reset', 'image'].includes((input.getAttribute('type') ?? '').toLowerCase()))
      .filter(visible)
      .map(readInput);
    const submit = [...form.querySelectorAll('button, input[type=submit], input[type=image]')]
      .filter((button) => (button.getAttribute('type') ?? 'submit').toLowerCase() === 'submit')
      .filter(visible)
      .map((button) => ({ selector: selectorOf(button), text: nameOf(button) }));
    // Its role, address, fields and buttons: a search may say so only as "Keyword" and "Find parts".
    const words = `${form.getAttribute('role') ?? ''} ${form.getAttribute('action') ?? ''} ${inputs.map((input) => `${input.name} ${input.label}`).join(' ')} ${submit.map((button) => button.text).join(' ')}`;
    forms.push({
      selector: selectorOf(form),
      purpose: formPurpose(
        inputs.map((input) => input.type),
        words,
      ),
      inputs,
      submit,
    });
  }
  return forms;
}

/** A field of a form: its type is the input's `type`, or the tag of a `select` or `textarea`. */
export function readInput(input: Element): FormInput {
  const options =
    input.tagName === 'SELECT'
      ? {
          options: [...(input as HTMLSelectElement).options]
            .filter((option) => !option.disabled)
            .slice(0, 40)
            .map((option) => ({ value: option.value, text: clean(option.textContent) })),
        }
      : {};
  return {
    ...options,
    selector: selectorOf(input),
    label: labelOf(input),
    type: input.tagName.toLowerCase() === 'input' ? (input.getAttribute('type') ?? 'text').toLowerCase() : input.tagName.toLowerCase(),
    name: input.getAttribute('name'),
    required: input.hasAttribute('required') || input.getAttribute('aria-required') === 'true',
    filled: Boolean((input as HTMLInputElement).value),
  };
}

/** What a form is for, from its fields' types and the words around it: a password logs in, a search field or search words search. */
export function formPurpose(types: string[], words: string): PageForm['purpose'] {
  if (types.includes('password')) return 'login';
  if (types.includes('search') || /search|query|\bq\b|find|keywords?\b|look\s?up/i.test(words)) return 'search';
  return 'other';
}

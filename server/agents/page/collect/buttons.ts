import type { ElementRef } from '../pageModel.ts';
import { nameOf } from './accessibleName.ts';
import { selectorOf } from './selector.ts';
import { visible } from './visible.ts';

/** The visible buttons outside forms (at most 30): a form's own are its submit controls. */
export function readButtons(): ElementRef[] {
  return [...document.querySelectorAll('button, [role=button], input[type=button]')]
    .filter((button) => visible(button) && !button.closest('form'))
    .slice(0, 30)
    .map((button) => ({ selector: selectorOf(button), text: nameOf(button) }));
}

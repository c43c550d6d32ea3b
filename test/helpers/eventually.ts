// Polls an async condition until it holds (controllers act asynchronously);
// fails with `what` when it never does. No timing is asserted.
import { expect } from 'vitest';

export async function eventually(check: () => Promise<boolean>, what = 'condition', attempts = 400): Promise<void> {
  for (let i = 0; i < attempts; i++) {
    if (await check()) return;
    await new Promise((r) => setTimeout(r, 25));
  }
  expect(await check(), what).toBe(true);
}

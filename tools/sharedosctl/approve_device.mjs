// Approves an OAuth 2 device code at the test provider (tests/oidc/provider.mjs) in headless
// Chromium, as a person would: opens the verification URI with the user code, confirms it,
// signs in at the provider's login form and waits for its success page.
// Environment: VERIFICATION_URI (verification_uri_complete), USER (alice, bob, ops, carol),
// WORKSPACE (node_modules).
import { createRequire } from 'node:module';
import path from 'node:path';

const env = (name) => {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is not set`);
  return value;
};
const require = createRequire(path.join(env('WORKSPACE'), 'package.json'));
const { chromium } = require('playwright-core');

const browser = await chromium.launch({ executablePath: '/usr/bin/chromium', headless: true,
  args: ['--no-sandbox'] });
try {
  const page = await (await browser.newContext()).newPage();
  await page.goto(env('VERIFICATION_URI'));
  // The confirmation of the code shown on the terminal.
  await page.locator('button[form="op.deviceConfirmForm"]:not([name=abort])').click();
  await page.locator('input[name=login]').fill(env('USER'));
  await page.locator('input[name=password]').fill('any-password');
  await page.locator('button[type=submit]').click();
  await page.getByRole('heading', { name: 'Sign-in Success' }).waitFor({ timeout: 15000 });
  console.log('approve_device: approved');
} finally {
  await browser.close();
}

// The reviewer console's sign-in at a real OpenID provider (tests/oidc/provider.mjs, npm
// oidc-provider), in headless Chromium (/usr/bin/chromium through playwright-core), each case its
// own test (node:test). Environment: CONSOLE_URL, ISSUER (the provider), ESCALATION (pending,
// addressed to human:alice in world-demo), CONSOLE_SECRET (the console client's secret, for the
// missing-verifier case at the provider's token endpoint), PROVIDER_PID (stopped by the last
// case), WORKSPACE (node_modules), OUT_DIR (screenshots).
//
// Cases: alice signs in at the provider (its login form), sees her escalation in the queue and
// approves it (the script that runs this checks the record names her iss/sub); a carol without a
// SharedOS group gets an error page, never a session; a wrong state, a replayed authorization
// code, a wrong PKCE verifier (a code presented with another sign-in's verifier) each end on the
// console's sign-in error page without a session; a missing verifier is refused by the provider;
// sign-out ends the session and goes to the provider's end-session page; the provider stopped →
// an error page.
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import path from 'node:path';
import { after, before, test } from 'node:test';

const env = (name) => {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is not set`);
  return value;
};
const require = createRequire(path.join(env('WORKSPACE'), 'package.json'));
const { chromium } = require('playwright-core');

const consoleUrl = env('CONSOLE_URL').replace(/\/$/, '');
const issuer = env('ISSUER');
const outDir = env('OUT_DIR');

let browser;
before(async () => {
  browser = await chromium.launch({ executablePath: '/usr/bin/chromium', headless: true,
    args: ['--no-sandbox'] });
});
after(async () => { await browser?.close(); });

async function newPage() {
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  return { context, page: await context.newPage() };
}

// The provider's login form (devInteractions: any password).
async function loginAtProvider(page, user) {
  await page.waitForURL((url) => url.href.startsWith(issuer), { timeout: 10000 });
  await page.locator('input[name=login]').fill(user);
  await page.locator('input[name=password]').fill('any-password');
  await page.locator('button[type=submit]').click();
}

// Signs in as `user` up to the provider's redirect back, which is captured and not followed:
// the callback URL (with code and state); the browser holds the sign-in's binding cookie.
async function codeFor(page, user) {
  let captured;
  // The provider's redirect back is caught at the provider's answer (a route does not see the
  // redirected request itself), so the browser never reaches the callback with this code.
  await page.route(`${issuer}/**`, async (route) => {
    const response = await route.fetch({ maxRedirects: 0 });
    const location = response.headers().location ?? '';
    if (location.startsWith(`${consoleUrl}/oidc/callback`)) {
      captured = location;
      return route.fulfill({ status: 200, contentType: 'text/plain', body: 'captured' });
    }
    return route.fulfill({ response });
  });
  await page.goto(`${consoleUrl}/signin`);
  await Promise.all([page.waitForURL((u) => u.href.startsWith(issuer), { timeout: 10000 }),
    page.locator('#oidc').click()]);
  await loginAtProvider(page, user);
  await page.getByText('captured').waitFor({ timeout: 10000 });
  await page.unroute(`${issuer}/**`);
  assert.ok(captured, 'the provider redirected back to the console');
  const url = new URL(captured);
  assert.ok(url.searchParams.get('code'), `a code in ${captured}`);
  return url;
}

// A new sign-in begun in this context (its state; the binding cookie replaced), not followed.
async function beginSignIn(context) {
  const started = await context.request.get(`${consoleUrl}/oidc/start`, { maxRedirects: 0 });
  assert.equal(started.status(), 303);
  return new URL(started.headers().location).searchParams.get('state');
}

async function hasSession(context) {
  return (await context.cookies()).some((c) => c.name === 'sos_session' && c.value);
}

async function expectSignInError(page, response, status, pattern) {
  assert.equal(response.status(), status, await page.content());
  const text = await page.locator('#signin-error').innerText();
  assert.match(text, pattern);
}

test('alice signs in at the provider, sees her queue and approves', async () => {
  const { context, page } = await newPage();
  await page.goto(consoleUrl);
  assert.match(page.url(), /\/signin$/);
  await page.getByRole('link', { name: /identity provider/ }).click();
  await loginAtProvider(page, 'alice');
  await page.waitForURL(/\/queue/, { timeout: 15000 });
  const cookies = await context.cookies();
  const session = cookies.find((c) => c.name === 'sos_session');
  assert.ok(session, 'a session cookie');
  assert.equal(session.httpOnly, true);
  assert.equal(session.sameSite, 'Strict');
  assert.ok(!cookies.some((c) => c.name === 'sos_oidc' && c.value), 'the binding cookie is spent');
  assert.match(await page.locator('.who').innerText(), /human:alice \(reviewer\)/);
  const card = page.locator('section.escalation', { hasText: env('ESCALATION') });
  await card.waitFor();
  await page.screenshot({ path: path.join(outDir, 'oidc-queue.png'), fullPage: true });
  await card.getByRole('button', { name: 'Approve' }).click();
  await page.locator('#decided').waitFor();
  assert.match(await page.locator('#decided').innerText(),
    new RegExp(`${env('ESCALATION')} is approved`));
  // Sign-out ends the session here and at the provider (its end-session page).
  await page.getByRole('button', { name: 'Sign out' }).click();
  await page.waitForURL((url) => url.href.startsWith(issuer), { timeout: 10000 });
  assert.equal(await hasSession(context), false, 'the session cookie is cleared');
  await context.close();
});

test('a person without a SharedOS role gets an error page, not a session', async () => {
  const { context, page } = await newPage();
  await page.goto(`${consoleUrl}/signin`);
  await page.locator('#oidc').click();
  await loginAtProvider(page, 'carol');
  await page.waitForURL(`${consoleUrl}/oidc/callback**`);
  assert.match(await page.locator('#signin-error').innerText(), /no role in SharedOS/);
  assert.equal(await hasSession(context), false);
  await context.close();
});

test('a wrong state is a sign-in error, never a session', async () => {
  const { context, page } = await newPage();
  const callback = await codeFor(page, 'alice');
  callback.searchParams.set('state', 'not-the-state');
  const response = await page.goto(callback.href);
  await expectSignInError(page, response, 400, /state: not a sign-in in progress/);
  assert.equal(await hasSession(context), false);
  await context.close();
});

test('a replayed authorization code is refused by the provider, shown as a sign-in error', async () => {
  const { context, page } = await newPage();
  const callback = await codeFor(page, 'alice');
  // The code is used once, legitimately.
  await page.goto(callback.href);
  await page.waitForURL(/\/queue/, { timeout: 15000 });
  await context.clearCookies({ name: 'sos_session' });
  // The same code again, with a fresh sign-in of this browser (so the console does exchange it).
  callback.searchParams.set('state', await beginSignIn(context));
  const response = await page.goto(callback.href);
  await expectSignInError(page, response, 401, /invalid_grant/);
  assert.equal(await hasSession(context), false);
  // The very same callback URL (state and code) again: the state is spent.
  const again = await page.goto(callback.href);
  await expectSignInError(page, again, 400, /state: not a sign-in in progress/);
  await context.close();
});

test('a wrong PKCE verifier is refused by the provider, shown as a sign-in error', async () => {
  const { context, page } = await newPage();
  const callback = await codeFor(page, 'alice');
  // Another sign-in's state: the console sends that sign-in's verifier with this code.
  callback.searchParams.set('state', await beginSignIn(context));
  const response = await page.goto(callback.href);
  await expectSignInError(page, response, 401, /invalid_grant/);
  assert.equal(await hasSession(context), false);
  await context.close();
});

test('a missing PKCE verifier is refused by the provider', async () => {
  const { context, page } = await newPage();
  const callback = await codeFor(page, 'alice');
  const discovery = await (await fetch(`${issuer}/.well-known/openid-configuration`)).json();
  const answer = await fetch(discovery.token_endpoint, {
    method: 'POST',
    headers: {
      'content-type': 'application/x-www-form-urlencoded',
      authorization: `Basic ${Buffer.from(`sharedos-console:${env('CONSOLE_SECRET')}`).toString('base64')}`,
    },
    body: new URLSearchParams({ grant_type: 'authorization_code',
      code: callback.searchParams.get('code'), redirect_uri: `${consoleUrl}/oidc/callback` }),
  });
  assert.equal(answer.status, 400);
  assert.equal((await answer.json()).error, 'invalid_grant');
  await context.close();
});

test('the provider unreachable is a sign-in error page', async () => {
  const { context, page } = await newPage();
  const callback = await codeFor(page, 'alice');
  process.kill(Number(env('PROVIDER_PID')), 'SIGTERM');
  for (let i = 0; i < 100; i += 1) {
    try {
      await fetch(issuer);
      await new Promise((resolve) => { setTimeout(resolve, 50); });
    } catch {
      break;
    }
  }
  const response = await page.goto(callback.href);
  await expectSignInError(page, response, 502, /cannot reach the identity provider/);
  assert.equal(await hasSession(context), false);
  await page.screenshot({ path: path.join(outDir, 'oidc-unreachable.png'), fullPage: true });
  await context.close();
});

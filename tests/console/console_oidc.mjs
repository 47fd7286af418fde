// The reviewer console's sign-in at a real OpenID provider (tests/oidc/provider.mjs, npm
// oidc-provider), in headless Chromium (/usr/bin/chromium through playwright-core), each case its
// own test (node:test). Environment: CONSOLE_URL, ISSUER (the provider), ESCALATION (pending,
// addressed to human:alice in world-demo), CONSOLE_SECRET (the console client's secret, for the
// missing-verifier and reused-code cases at the provider's token endpoint), PROVIDER_PID (stopped
// by the last case), PROVIDER_LOG (the provider's stderr: why it refused a grant), WORKSPACE
// (node_modules), OUT_DIR (screenshots).
//
// Cases: alice signs in at the provider (its login form), sees her escalation in the queue and
// approves it (the script that runs this checks the record names her iss/sub); a carol without a
// SharedOS group gets an error page, never a session; a wrong state, a replayed authorization
// code, a wrong PKCE verifier (a code presented with another sign-in's verifier) each end on the
// console's sign-in error page without a session; the provider refuses a code presented twice and
// a token request without a verifier (the console always sends one, so the test sends it);
// sign-out ends the session and goes to the provider's end-session page; the provider stopped →
// an error page.
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import fs from 'node:fs';
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

// Signs in as `user` up to the provider's redirect back to the console, which is held back: the
// browser's request to the console's /oidc/callback is intercepted (Chromium's Fetch domain over
// the page's DevTools session: Playwright's page.route is not called for a request reached by a
// redirect, and the provider's answer is one) and answered here, so the console never sees this
// code. Returns the callback URL (code and state); the browser holds the sign-in's binding cookie.
// With `challenge`, the console's authorization request is sent with that PKCE challenge instead
// of its own (the test then holds the verifier and can present the code at the token endpoint).
async function codeFor(page, user, { challenge } = {}) {
  const cdp = await page.context().newCDPSession(page);
  const callback = new Promise((resolve) => {
    cdp.on('Fetch.requestPaused', (event) => {
      resolve(event.request.url);
      cdp.send('Fetch.fulfillRequest', {
        requestId: event.requestId,
        responseCode: 200,
        responseHeaders: [{ name: 'content-type', value: 'text/plain' }],
        body: Buffer.from('captured').toString('base64'),
      }).catch(() => {});
    });
  });
  await cdp.send('Fetch.enable',
    { patterns: [{ urlPattern: `${consoleUrl}/oidc/callback*`, requestStage: 'Request' }] });
  if (challenge) {
    const started = await page.context().request.get(`${consoleUrl}/oidc/start`,
      { maxRedirects: 0 });
    const authorize = new URL(started.headers().location);
    assert.equal(authorize.searchParams.get('code_challenge_method'), 'S256');
    authorize.searchParams.set('code_challenge', challenge);
    await page.goto(authorize.href);
  } else {
    await page.goto(`${consoleUrl}/signin`);
    await Promise.all([page.waitForURL((u) => u.href.startsWith(issuer), { timeout: 10000 }),
      page.locator('#oidc').click()]);
  }
  await loginAtProvider(page, user);
  const captured = await Promise.race([callback, new Promise((_, reject) => {
    setTimeout(() => reject(new Error('no redirect to the console within 10 s')), 10000).unref();
  })]);
  await page.getByText('captured').waitFor({ timeout: 10000 });
  await cdp.send('Fetch.disable');
  await cdp.detach();
  const url = new URL(captured);
  assert.ok(url.searchParams.get('code'), `a code in ${captured}`);
  assert.ok(url.searchParams.get('state'), `a state in ${captured}`);
  return url;
}

// A new sign-in begun in this context (its state; the binding cookie replaced), not followed.
async function beginSignIn(context) {
  const started = await context.request.get(`${consoleUrl}/oidc/start`, { maxRedirects: 0 });
  assert.equal(started.status(), 303);
  return new URL(started.headers().location).searchParams.get('state');
}

// A PKCE pair (RFC 7636 S256) the test holds itself.
function pkcePair() {
  const verifier = crypto.randomBytes(32).toString('base64url');
  return { verifier, challenge: crypto.createHash('sha256').update(verifier).digest('base64url') };
}

// The console client's token request for `code`, sent by the test (client_secret_basic), with
// `verifier` when given: { status, body }.
async function redeem(code, verifier) {
  const discovery = await (await fetch(`${issuer}/.well-known/openid-configuration`)).json();
  const form = { grant_type: 'authorization_code', code,
    redirect_uri: `${consoleUrl}/oidc/callback` };
  if (verifier) form.code_verifier = verifier;
  const answer = await fetch(discovery.token_endpoint, {
    method: 'POST',
    headers: {
      'content-type': 'application/x-www-form-urlencoded',
      authorization: `Basic ${Buffer.from(`sharedos-console:${env('CONSOLE_SECRET')}`).toString('base64')}`,
    },
    body: new URLSearchParams(form),
  });
  return { status: answer.status, body: await answer.json() };
}

// The provider's stderr past `from` bytes: its "provider: grant.error" lines say why a grant was
// refused (the token endpoint's answer says only invalid_grant).
function providerLog(from = 0) {
  return fs.readFileSync(env('PROVIDER_LOG'), 'utf8').slice(from);
}
function providerLogSize() {
  return fs.statSync(env('PROVIDER_LOG')).size;
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

test('a replayed callback is refused by the console, a replayed code by the provider', async () => {
  const { context, page } = await newPage();
  const callback = await codeFor(page, 'alice');
  // The code is used once, legitimately.
  await page.goto(callback.href);
  await page.waitForURL(/\/queue/, { timeout: 15000 });
  await context.clearCookies({ name: 'sos_session' });
  // The very same callback (state and code) again: the console's sign-in is spent, it does not
  // send the code to the provider a second time.
  const again = await page.goto(callback.href);
  await expectSignInError(page, again, 400, /state: not a sign-in in progress/);
  assert.equal(await hasSession(context), false);
  // The same code under a fresh sign-in of this browser: the console does send it, the provider
  // refuses it (that sign-in's verifier is not the code's either, and the provider checks the
  // verifier first), the console shows its error page and opens no session.
  const mark = providerLogSize();
  callback.searchParams.set('state', await beginSignIn(context));
  const replayed = await page.goto(callback.href);
  await expectSignInError(page, replayed, 401, /invalid_grant/);
  assert.equal(await hasSession(context), false);
  assert.match(providerLog(mark), /grant\.error invalid_grant/);
  await context.close();
});

test('the provider refuses an authorization code presented twice with its own verifier', async () => {
  const { context, page } = await newPage();
  const pkce = pkcePair();
  const callback = await codeFor(page, 'alice', { challenge: pkce.challenge });
  const code = callback.searchParams.get('code');
  const first = await redeem(code, pkce.verifier);
  assert.equal(first.status, 200, JSON.stringify(first.body));
  assert.ok(first.body.id_token, 'the first redemption yields an ID token');
  const mark = providerLogSize();
  const second = await redeem(code, pkce.verifier);
  assert.equal(second.status, 400);
  assert.equal(second.body.error, 'invalid_grant');
  assert.match(providerLog(mark), /grant\.error invalid_grant: authorization code already consumed/);
  await context.close();
});

test('a wrong PKCE verifier is refused by the provider, shown as a sign-in error', async () => {
  const { context, page } = await newPage();
  const callback = await codeFor(page, 'alice');
  // Another sign-in's state: the console sends that sign-in's verifier with this code.
  const mark = providerLogSize();
  callback.searchParams.set('state', await beginSignIn(context));
  const response = await page.goto(callback.href);
  await expectSignInError(page, response, 401, /invalid_grant/);
  assert.equal(await hasSession(context), false);
  assert.match(providerLog(mark),
    /grant\.error invalid_grant: code_verifier does not match code_challenge/);
  await context.close();
});

// The console always sends its verifier, so a request without one cannot be made through it: the
// provider's configuration requires PKCE, shown by the token request without a verifier refused
// and the same code then accepted with it (the refusal was the missing verifier, nothing else).
test('a missing PKCE verifier is refused by the provider', async () => {
  const { context, page } = await newPage();
  const pkce = pkcePair();
  const callback = await codeFor(page, 'alice', { challenge: pkce.challenge });
  const code = callback.searchParams.get('code');
  const mark = providerLogSize();
  const without = await redeem(code);
  assert.equal(without.status, 400);
  assert.equal(without.body.error, 'invalid_grant');
  assert.match(providerLog(mark), /grant\.error invalid_grant: code_verifier must be provided/);
  const withIt = await redeem(code, pkce.verifier);
  assert.equal(withIt.status, 200, JSON.stringify(withIt.body));
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

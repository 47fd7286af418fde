// Drives the reviewer console in headless Chromium (/usr/bin/chromium through playwright-core;
// a fresh profile under $TMPDIR per browser). Environment: CONSOLE_URL, ESCALATION (the
// quickstart's pending escalation), DENIED_ESCALATION (a second one, of the same turn run
// again), ALICE_TOKEN / BOB_TOKEN (reviewer secrets' files, both in
// world-demo; the escalation is alice's), ADMIN_TOKEN, SHAREDOSCTL and SHAREDOS_TARGET (to run
// the next turn, in TURN_DIR), WORKSPACE (node_modules), OUT_DIR (screenshots).
//
// bob signs in and does not see alice's escalation; alice signs in and sees it as a sentence; a
// form post without the CSRF token is refused 403 and a bad narrowing 400 naming the field (the
// escalation stays pending); alice approves with max uses 1 and sees the issued grant; she denies
// the second escalation with a two-line note and sees it on the result page; sharedosctl's
// `escalations show` prints the note, and the escalation.resolved record says only its length
// (the text is not in the audit log); the next turn's write succeeds; alice's record view is refused (the audit log answers admins only: the
// console has no authority of its own); the admin's record shows the first turn's refusal
// (SOURCE kernel, REASON no_matching_grant) and the next turn's write succeeded, and the chain
// verifies.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';

const env = (name) => {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is not set`);
  return value;
};
const require = createRequire(path.join(env('WORKSPACE'), 'package.json'));
const { chromium } = require('playwright-core');

const url = env('CONSOLE_URL');
const escalation = env('ESCALATION');
const deniedEscalation = env('DENIED_ESCALATION');
const note = 'Not this file, please.\nWrite to Workspace/drafts/ instead.';
const outDir = env('OUT_DIR');
const secret = (name) => readFileSync(env(name), 'utf8').trim();

function step(text) {
  console.log(`console_browser: ${text}`);
}

async function signIn(browser, tokenVar) {
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  const page = await context.newPage();
  await page.goto(url);
  assert.match(page.url(), /\/signin$/, 'a signed-out visitor is sent to sign in');
  await page.getByLabel('Credential secret').fill(secret(tokenVar));
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.waitForURL(/\/queue/, { timeout: 10000 }).catch(async (error) => {
    throw new Error(`sign-in did not reach the queue: ${page.url()}: ${await page.content()}`,
      { cause: error });
  });
  return { context, page };
}

async function checkSessionCookie(context) {
  const cookies = await context.cookies();
  const session = cookies.find((c) => c.name === 'sos_session');
  assert.ok(session, 'a session cookie is set');
  assert.equal(session.httpOnly, true, 'the session cookie is HttpOnly');
  assert.equal(session.sameSite, 'Strict', 'the session cookie is SameSite=Strict');
  assert.ok(!cookies.some((c) => c.value.includes(secret('ALICE_TOKEN').replace(/^sos_/, ''))),
    'no cookie carries the secret');
}

async function checkAccessible(page) {
  // Every visible control has a label; the page has one main landmark and a level-1 heading.
  const unlabelled = await page.$$eval('input:not([type=hidden]), select, textarea',
    (controls) => controls.filter((c) => c.labels.length === 0).map((c) => c.name));
  assert.deepEqual(unlabelled, [], 'every control has a label');
  assert.equal(await page.locator('main').count(), 1);
  assert.equal(await page.locator('h1').count(), 1);
  // The first Tab lands on the skip link.
  await page.keyboard.press('Tab');
  assert.equal(await page.evaluate(() => document.activeElement.className), 'skip');
}

async function bobDoesNotSeeIt(browser) {
  const { context, page } = await signIn(browser, 'BOB_TOKEN');
  await page.locator('#empty').waitFor();
  assert.match(await page.locator('#empty').innerText(), /No pending escalations for you in world-demo/);
  assert.ok(!(await page.content()).includes(escalation), "bob's queue does not show alice's escalation");
  step('bob signed in; his queue does not show the escalation');
  await context.close();
}

async function refusals(context, page, card) {
  // A forged form post (no CSRF token) with alice's own session cookie.
  const forged = await context.request.post(`${url}decide`, {
    form: { id: escalation, decision: 'approve', max_uses: '1' }, maxRedirects: 0,
  });
  assert.equal(forged.status(), 403, 'a form post without the CSRF token is refused');
  assert.match(await forged.text(), /csrf: the form&#39;s token is missing/);
  // A cross-site post with the right token is refused too (Origin).
  const csrf = await card.locator('input[name=csrf]').first().inputValue();
  const crossSite = await context.request.post(`${url}decide`, {
    form: { csrf, id: escalation, decision: 'approve' },
    headers: { Origin: 'https://attacker.example' }, maxRedirects: 0,
  });
  assert.equal(crossSite.status(), 403, 'a cross-site post is refused');
  // A bad narrowing is a 400 naming the field.
  const bad = await context.request.post(`${url}decide`, {
    form: { csrf, id: escalation, decision: 'approve', max_uses: '0' }, maxRedirects: 0,
  });
  assert.equal(bad.status(), 400);
  assert.match(await bad.text(), /max_uses/);
  await page.reload();
  assert.ok((await page.content()).includes(escalation), 'the escalation is still pending');
  step('forged (403), cross-site (403) and bad (400) posts refused; still pending');
}

async function aliceApproves(browser) {
  const { context, page } = await signIn(browser, 'ALICE_TOKEN');
  await checkSessionCookie(context);
  const card = page.locator('section.escalation', { hasText: escalation });
  await card.waitFor();
  const sentence = await card.locator('h2').innerText();
  assert.match(sentence, /^agent:agent-assistant needs files:Workspace\/summary\.txt \[create\], for purpose .+, asked in turn exec-\S+ because .+/);
  const turnLink = await card.getByRole('link', { name: "the turn's records" }).getAttribute('href');
  const firstExecution = new URL(turnLink, url).searchParams.get('execution');
  assert.ok(firstExecution, 'the queue links to the turn\'s records');
  await page.screenshot({ path: path.join(outDir, 'queue.png'), fullPage: true });
  await checkAccessible(page);
  step(`alice sees: ${sentence}`);

  await refusals(context, page, card);

  const fresh = page.locator('section.escalation', { hasText: escalation });
  await fresh.getByLabel('Max uses (optional)').fill('1');
  await fresh.getByRole('button', { name: 'Approve' }).click();
  await page.locator('#decided').waitFor();
  assert.match(await page.locator('#decided').innerText(), new RegExp(`${escalation} is approved`));
  const grant = await page.locator('pre').innerText();
  assert.match(grant, /max_uses=1/, 'the issued grant is single-use');
  assert.match(grant, /files:Workspace\/summary\.txt.*\[create\]/);
  step('alice approved with max uses 1; the issued grant is shown');
  await aliceDeniesWithANote(page);

  const record = await page.goto(`${url}record?namespace=world-demo`);
  assert.equal(record.status(), 403, "a reviewer's record view is refused by the audit log");
  assert.match(await page.locator('#message').innerText(), /^PERMISSION_DENIED/);
  await context.close();
  return firstExecution;
}

async function aliceDeniesWithANote(page) {
  await page.goto(`${url}queue`);
  const card = page.locator('section.escalation', { hasText: deniedEscalation });
  await card.waitFor();
  const deny = card.getByRole('form', { name: `Deny ${deniedEscalation}` });
  await deny.getByLabel('Note (optional)').fill(note);
  await deny.getByRole('button', { name: 'Deny' }).click();
  await page.locator('#decided').waitFor();
  assert.match(await page.locator('#decided').innerText(),
    new RegExp(`${deniedEscalation} is denied`));
  // The text as sent, and its line breaks kept on screen (white-space: pre-wrap from the
  // console's stylesheet, applied once it has loaded).
  await page.waitForLoadState('load');
  const shownNote = page.locator('#note');
  assert.equal(await shownNote.textContent(), note, 'the result shows the note as sent');
  assert.equal(await shownNote.evaluate((e) => getComputedStyle(e).whiteSpace), 'pre-wrap',
    'the note keeps its line breaks on screen');
  assert.equal(await page.locator('#issued').count(), 0, 'a denial issues nothing');
  await page.screenshot({ path: path.join(outDir, 'denied.png'), fullPage: true });
  // Kept on the escalation (sharedosctl shows it), never in the audit log.
  const ctl = (args) => execFileSync(env('SHAREDOSCTL'), args, {
    encoding: 'utf8', env: { ...process.env }, cwd: env('TURN_DIR'),
  });
  const shown = ctl(['escalations', 'show', `--id=${deniedEscalation}`]);
  // Operator output indents each line of a multi-line field by two spaces.
  const indented = note.split('\n').map((line) => `  ${line}`).join('\n');
  assert.ok(shown.includes(`note:\n${indented}\n`), shown);
  const resolved = ctl(['--json', 'audit', 'query', '--namespace=world-demo',
    '--type=escalation.resolved']);
  assert.match(resolved, /"noteBytes": ?\d+/, resolved);
  assert.ok(!resolved.includes('Workspace/drafts'), 'the note text is not in the audit log');
  step('alice denied the second escalation with a note; it is kept, shown and not audited');
}

function nextTurn() {
  const out = execFileSync(env('SHAREDOSCTL'), ['turn'], {
    encoding: 'utf8', env: { ...process.env }, cwd: env('TURN_DIR'),
  });
  assert.match(out, /files\.create Workspace\/summary\.txt: succeeded/, out);
  assert.match(out, /^turn: succeeded$/m, out);
  const execution = out.match(/\(execution (\S+?),/);
  assert.ok(execution, out);
  step('the next turn wrote Workspace/summary.txt');
  return execution[1];
}

async function adminReadsTheRecord(browser, firstExecution, secondExecution) {
  const { context, page } = await signIn(browser, 'ADMIN_TOKEN');
  // Each turn by its execution id, as the queue links it: the record of its trace up to its end.
  const rows = async (execution, outcome = '') => {
    await page.goto(`${url}turn?execution=${encodeURIComponent(execution)}${outcome}`);
    assert.match(page.url(), /\/record\?trace=trace-quickstart&until=/);
    assert.match(await page.locator('#verify').innerText(), /^Chain: ok: \d+ records verify/);
    return page.$$eval('#records tbody tr', (trs) => trs.map((tr) =>
      Object.fromEntries([...tr.cells].map((td, i) =>
        [tr.closest('table').tHead.rows[0].cells[i].innerText, td.innerText]))));
  };
  const denials = await rows(firstExecution, '&outcome=denied');
  assert.ok(denials.length > 0 && denials.every((r) => r.OUTCOME === 'denied'));
  assert.ok(denials.some((r) => r.TOOL === 'files.create' && r.SOURCE === 'kernel' &&
    r.REASON === 'no_matching_grant'),
  `the first turn's refusal names who refused and why: ${JSON.stringify(denials)}`);
  const first = await rows(firstExecution);
  assert.ok(!first.some((r) => r.TOOL === 'files.create' && r.OUTCOME === 'succeeded'),
    'the first turn\'s record ends before the next turn');
  const second = await rows(secondExecution);
  assert.ok(second.some((r) => r.TOOL === 'files.create' && r.OUTCOME === 'succeeded'),
    `the next turn's write succeeded: ${JSON.stringify(second)}`);
  const sequences = second.map((r) => Number(r.SEQ));
  assert.deepEqual(sequences, [...sequences].sort((a, b) => a - b), 'records in order');
  await page.screenshot({ path: path.join(outDir, 'record.png'), fullPage: true });
  await checkAccessible(page);
  step('the admin\'s record shows the refusal, the write succeeded, and the chain verifies');
  await context.close();
}

const browser = await chromium.launch({
  executablePath: '/usr/bin/chromium',
  headless: true,
  args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
    '--disable-background-networking', '--disable-component-update', '--disable-sync'],
});
try {
  await bobDoesNotSeeIt(browser);
  const firstExecution = await aliceApproves(browser);
  const secondExecution = nextTurn();
  await adminReadsTheRecord(browser, firstExecution, secondExecution);
} finally {
  await browser.close();
}
step('ok');

// The scripted model server (test support): speaks the model APIs real agent CLIs call, answering
// from a script instead of a model, so a CLI can be driven through SharedOS's MCP door offline and
// deterministically. Served on 127.0.0.1 only:
//
//   POST /v1/messages                                   Anthropic Messages (Claude Code, Pi)
//   POST /v1/responses                                  OpenAI Responses (Codex)
//   POST /v1/chat/completions                           OpenAI Chat Completions (opencode)
//   POST /v1beta/models/<model>:streamGenerateContent   Gemini (Gemini CLI), and :generateContent,
//                                                       :countTokens
//
// A "main" request is one that offers the model tools: it is the CLI's agent loop, and it is
// answered from the script. Any other request (a title, a next-speaker check, a token count) is a
// side request, answered at once with a short fixed text. Every request is appended to the log.
//
// Driven over JSON lines (the column tests, tests/cli/cli_driver.h), one answer per request:
//   {"op":"launch","command":[…],"env":{…},"cwd":…,"timeoutMs":…}
//       starts the CLI (stdin /dev/null) → {"ok":true,"port":…}
//   {"op":"tools"}  waits for the CLI's first main request → {"ok":true,"tools":[names offered]}
//   {"op":"call","tool":"files.read","arguments":{…},"like":"files.list"}
//       answers the CLI's pending main request with a call of the tool (named as the CLI offered
//       it to the model), then waits for the CLI's next main request and reports the tool result
//       it carries — what the CLI showed the model:
//       → {"ok":true,"offered":bool,"name":…,"text":…,"isError":bool|null}
//       "offered" false: the CLI never offered the model that tool; the call is still made,
//       under the name the CLI gave `like` (an offered tool) with the prefix it put on it.
//   {"op":"end","text":…}   answers the pending main request with a final text; waits for the CLI
//       to exit → {"ok":true,"exitCode":…,"signal":…,"stdout":…,"stderr":…}
//   {"op":"requests"}       → {"ok":true,"requests":[{"api","path","main","model"}]}
//
// A CLI with a server mode (opencode: `sharedosctl mcp-config --cli=opencode-serve`) runs warm,
// one server for many turns, instead of one launch per turn:
//   {"op":"serve","command":[…],"env":{…},"cwd":…,"timeoutMs":…,"password":…}
//       starts the server (stdin /dev/null) and waits, at most timeoutMs, for the line naming its
//       URL ("… listening on http://…") → {"ok":true,"url":…}. Killed when this driver ends.
//   {"op":"prompt","request":{"method","path","query","body"},"text":…,"timeoutMs":…}
//       one turn on it: sends the recipe's per-turn request (the turn's MCP server), then creates
//       a session in the request's directory and sends it the prompt; the turn runs until that
//       message is answered (or timeoutMs: the session is aborted) → {"ok":true}. "tools",
//       "call" and "end" then work as for a launch ("end" waits for the turn's answer).
// Requests to the server carry basic auth (user "opencode", the password given to "serve").
// Failures answer {"ok":false,"error":…}. The server prints {"ok":true,"port":N} first.
//
//   node scripted_model.mjs [--log=<file>]
import { spawn } from 'node:child_process';
import { appendFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { createInterface } from 'node:readline';

const logPath = (process.argv.find((a) => a.startsWith('--log=')) ?? '').slice(6);
// Bounds: a request body the server reads, and the texts it reports back.
const kMaxBody = 16 << 20;
const kMaxReported = 64 << 10;
const kSideAnswer = 'ok';

function portable(name) {
  return name.replaceAll('.', '_');
}

function log(entry) {
  if (logPath) appendFileSync(logPath, JSON.stringify({ at: Date.now(), ...entry }) + '\n');
}

// ------------------------------------------------------------------ what a request offers and says

// The API a request speaks, by its path.
function apiOf(url) {
  if (url.startsWith('/v1/messages/count_tokens')) return 'anthropic-count';
  if (url.startsWith('/v1/messages')) return 'anthropic';
  if (url.startsWith('/v1/responses')) return 'responses';
  if (url.startsWith('/v1/chat/completions')) return 'chat';
  if (url.includes(':streamGenerateContent')) return 'gemini-stream';
  if (url.includes(':generateContent')) return 'gemini';
  if (url.includes(':countTokens')) return 'gemini-count';
  return 'unknown';
}

// The tools a request offers the model: [{name, namespace?}].
function offeredTools(api, body) {
  const out = [];
  if (api === 'anthropic') {
    for (const tool of body.tools ?? []) if (tool.name) out.push({ name: tool.name });
  } else if (api === 'responses') {
    for (const tool of body.tools ?? []) {
      if (tool.type === 'namespace') {
        for (const inner of tool.tools ?? []) out.push({ name: inner.name, namespace: tool.name });
      } else if (tool.name) {
        out.push({ name: tool.name });
      }
    }
  } else if (api === 'chat') {
    for (const tool of body.tools ?? []) if (tool.function?.name) out.push({ name: tool.function.name });
  } else if (api === 'gemini-stream' || api === 'gemini') {
    for (const group of body.tools ?? []) {
      for (const fn of group.functionDeclarations ?? []) out.push({ name: fn.name });
    }
  }
  return out;
}

// The offered tool a canonical SharedOS name is known by: the name itself, its portable form, or
// either behind the CLI's server prefix (mcp__<server>__files_read, <server>_files_read).
function findOffered(offered, canonical) {
  const forms = [canonical, portable(canonical)];
  for (const form of forms) {
    const exact = offered.find((t) => t.name === form);
    if (exact) return exact;
  }
  for (const form of forms) {
    const suffixed = offered.find(
      (t) => t.name.endsWith(`__${form}`) || t.name.endsWith(`_${form}`),
    );
    if (suffixed) return suffixed;
  }
  return null;
}

// Every string inside a value, in order (a tool result as text, however the API wraps it).
// An object's `type` is a tag, not text.
function strings(value, out = []) {
  if (typeof value === 'string') out.push(value);
  else if (Array.isArray(value)) for (const item of value) strings(item, out);
  else if (value && typeof value === 'object') {
    for (const [key, item] of Object.entries(value)) if (key !== 'type') strings(item, out);
  }
  return out;
}

// The result of call `id` as the request shows it to the model: {text, isError}, or null.
function toolResult(api, body, call) {
  if (api === 'anthropic') {
    for (const message of body.messages ?? []) {
      if (!Array.isArray(message.content)) continue;
      for (const block of message.content) {
        if (block.type === 'tool_result' && block.tool_use_id === call.id) {
          return { text: strings(block.content).join('\n'), isError: block.is_error ?? false };
        }
      }
    }
  } else if (api === 'responses') {
    for (const item of body.input ?? []) {
      if (item.type === 'function_call_output' && item.call_id === call.id) {
        return { text: strings(item.output).join('\n'), isError: null };
      }
    }
  } else if (api === 'chat') {
    for (const message of body.messages ?? []) {
      if (message.role === 'tool' && message.tool_call_id === call.id) {
        return { text: strings(message.content).join('\n'), isError: null };
      }
    }
  } else if (api === 'gemini-stream' || api === 'gemini') {
    for (const content of body.contents ?? []) {
      for (const part of content.parts ?? []) {
        const response = part.functionResponse;
        if (response && (response.id === call.id || (!response.id && response.name === call.name))) {
          return { text: strings(response.response).join('\n'), isError: null };
        }
      }
    }
  }
  return null;
}

// ------------------------------------------------------------------ answers, per API

function sse(res, events) {
  res.writeHead(200, {
    'content-type': 'text/event-stream',
    'cache-control': 'no-cache',
    connection: 'close',
  });
  for (const [event, data] of events) {
    if (event) res.write(`event: ${event}\n`);
    res.write(`data: ${typeof data === 'string' ? data : JSON.stringify(data)}\n\n`);
  }
  res.end();
}

function json(res, status, value) {
  const text = JSON.stringify(value);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

let counter = 0;
const nextId = (prefix) => `${prefix}${++counter}`;

// answer: {kind: 'text', text} | {kind: 'call', id, name, namespace?, arguments}
function answerAnthropic(res, body, answer) {
  const usage = { input_tokens: 10, output_tokens: 10 };
  const block =
    answer.kind === 'call'
      ? { type: 'tool_use', id: answer.id, name: answer.name, input: {} }
      : { type: 'text', text: '' };
  const stop = answer.kind === 'call' ? 'tool_use' : 'end_turn';
  const message = {
    id: nextId('msg_'),
    type: 'message',
    role: 'assistant',
    model: body.model ?? 'scripted',
    content: [],
    stop_reason: null,
    stop_sequence: null,
    usage,
  };
  if (!body.stream) {
    const full =
      answer.kind === 'call'
        ? { ...block, input: answer.arguments }
        : { type: 'text', text: answer.text };
    return json(res, 200, { ...message, content: [full], stop_reason: stop });
  }
  const delta =
    answer.kind === 'call'
      ? { type: 'input_json_delta', partial_json: JSON.stringify(answer.arguments) }
      : { type: 'text_delta', text: answer.text };
  sse(res, [
    ['message_start', { type: 'message_start', message }],
    ['content_block_start', { type: 'content_block_start', index: 0, content_block: block }],
    ['content_block_delta', { type: 'content_block_delta', index: 0, delta }],
    ['content_block_stop', { type: 'content_block_stop', index: 0 }],
    [
      'message_delta',
      { type: 'message_delta', delta: { stop_reason: stop, stop_sequence: null }, usage: { output_tokens: 10 } },
    ],
    ['message_stop', { type: 'message_stop' }],
  ]);
}

function answerResponses(res, body, answer) {
  const id = nextId('resp_');
  const item =
    answer.kind === 'call'
      ? {
          type: 'function_call',
          id: nextId('fc_'),
          call_id: answer.id,
          name: answer.name,
          ...(answer.namespace ? { namespace: answer.namespace } : {}),
          arguments: JSON.stringify(answer.arguments),
          status: 'completed',
        }
      : {
          type: 'message',
          id: nextId('msg_'),
          role: 'assistant',
          status: 'completed',
          content: [{ type: 'output_text', text: answer.text, annotations: [] }],
        };
  const usage = {
    input_tokens: 10,
    input_tokens_details: { cached_tokens: 0 },
    output_tokens: 10,
    output_tokens_details: { reasoning_tokens: 0 },
    total_tokens: 20,
  };
  const response = { id, object: 'response', status: 'in_progress', model: body.model ?? 'scripted', output: [] };
  if (!body.stream) return json(res, 200, { ...response, status: 'completed', output: [item], usage });
  const events = [['response.created', { type: 'response.created', response }]];
  events.push(['response.output_item.added', { type: 'response.output_item.added', output_index: 0, item }]);
  if (answer.kind === 'text') {
    events.push([
      'response.output_text.delta',
      { type: 'response.output_text.delta', item_id: item.id, output_index: 0, content_index: 0, delta: answer.text },
    ]);
  }
  events.push(['response.output_item.done', { type: 'response.output_item.done', output_index: 0, item }]);
  events.push([
    'response.completed',
    { type: 'response.completed', response: { ...response, status: 'completed', output: [item], usage } },
  ]);
  sse(res, events);
}

function answerChat(res, body, answer) {
  const base = { id: nextId('chatcmpl-'), object: 'chat.completion.chunk', created: 0, model: body.model ?? 'scripted' };
  const usage = { prompt_tokens: 10, completion_tokens: 10, total_tokens: 20 };
  const message =
    answer.kind === 'call'
      ? {
          role: 'assistant',
          content: null,
          tool_calls: [
            { index: 0, id: answer.id, type: 'function', function: { name: answer.name, arguments: JSON.stringify(answer.arguments) } },
          ],
        }
      : { role: 'assistant', content: answer.text };
  const finish = answer.kind === 'call' ? 'tool_calls' : 'stop';
  if (!body.stream) {
    return json(res, 200, {
      ...base,
      object: 'chat.completion',
      choices: [{ index: 0, message, finish_reason: finish }],
      usage,
    });
  }
  sse(res, [
    [null, { ...base, choices: [{ index: 0, delta: message, finish_reason: null }] }],
    [null, { ...base, choices: [{ index: 0, delta: {}, finish_reason: finish }] }],
    [null, { ...base, choices: [], usage }],
    [null, '[DONE]'],
  ]);
}

function answerGemini(res, body, answer, stream) {
  const part =
    answer.kind === 'call'
      ? { functionCall: { id: answer.id, name: answer.name, args: answer.arguments } }
      : { text: answer.text };
  const chunk = {
    candidates: [{ content: { role: 'model', parts: [part] }, finishReason: 'STOP', index: 0 }],
    usageMetadata: { promptTokenCount: 10, candidatesTokenCount: 10, totalTokenCount: 20 },
    modelVersion: 'scripted',
  };
  if (!stream) return json(res, 200, chunk);
  sse(res, [[null, chunk]]);
}

function answerRequest(pending, answer) {
  const { api, res, body } = pending;
  if (api === 'anthropic') return answerAnthropic(res, body, answer);
  if (api === 'responses') return answerResponses(res, body, answer);
  if (api === 'chat') return answerChat(res, body, answer);
  return answerGemini(res, body, answer, api === 'gemini-stream');
}

// A side request: answered at once.
function answerSide(api, res, body) {
  if (api === 'anthropic-count') return json(res, 200, { input_tokens: 10 });
  if (api === 'gemini-count') return json(res, 200, { totalTokens: 10 });
  if (api === 'gemini' && body.generationConfig?.responseJsonSchema?.properties?.next_speaker) {
    return answerGemini(res, body, { kind: 'text', text: '{"reasoning":"done","next_speaker":"user"}' }, false);
  }
  if (api === 'unknown') return json(res, 404, { error: 'not served by the scripted model' });
  return answerRequest({ api, res, body }, { kind: 'text', text: kSideAnswer });
}

// ------------------------------------------------------------------ the session

const requests = [];
let pending = null; // the main request awaiting its answer: {api, res, body, offered}
let pendingWaiters = [];
let awaiting = null; // the call whose result the next main request carries
let child = null;
let exited = null;
let exitWaiters = [];
// The warm server (op "serve") and whether a turn on it runs (op "prompt").
let served = null; // {process, url, auth}
let turnRunning = false;

function whenPending() {
  if (pending) return Promise.resolve(pending);
  return new Promise((resolve, reject) => pendingWaiters.push({ resolve, reject }));
}

function failWaiters(error) {
  for (const waiter of pendingWaiters) waiter.reject(error);
  pendingWaiters = [];
}

const server = createServer((req, res) => {
  const chunks = [];
  let size = 0;
  req.on('data', (chunk) => {
    size += chunk.length;
    if (size > kMaxBody) {
      req.destroy();
      return;
    }
    chunks.push(chunk);
  });
  req.on('end', () => {
    let body = {};
    try {
      body = chunks.length ? JSON.parse(Buffer.concat(chunks).toString('utf8')) : {};
    } catch {
      return json(res, 400, { error: 'body is not JSON' });
    }
    const api = apiOf(req.url);
    const offered = offeredTools(api, body);
    const main = offered.length > 0 && !api.endsWith('-count');
    requests.push({ api, path: req.url.split('?')[0], main, model: body.model ?? null });
    log({ api, method: req.method, path: req.url, main, body });
    if (!main) return answerSide(api, res, body);
    pending = { api, res, body, offered };
    const waiters = pendingWaiters;
    pendingWaiters = [];
    for (const waiter of waiters) waiter.resolve(pending);
  });
});

// A CLI or server runs in its own process group: an npm `.bin` entry is often a launcher that
// starts the real program as its child (opencode's does), and a signal to the launcher alone would
// leave that program running after the suite.
function killGroup(process_) {
  if (!process_?.pid) return;
  try {
    process.kill(-process_.pid, 'SIGKILL');
  } catch {
    // already gone
  }
}

// Everything this driver started, stopped: on stdin's end and on SIGTERM (the harness's stop).
function stopAll() {
  killGroup(child);
  killGroup(served?.process);
  server.close();
}
process.on('SIGTERM', () => {
  stopAll();
  process.exit(0);
});

function launch({ command, env, cwd, timeoutMs }) {
  if (child) throw new Error('a CLI is already running');
  exited = null;
  pending = null;
  awaiting = null;
  const [file, ...args] = command;
  // Its own process group (detached), so that stopping it stops what it started too.
  child = spawn(file, args, { cwd, env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
  log({ event: 'launch', command: file });
  const out = { stdout: '', stderr: '' };
  for (const stream of ['stdout', 'stderr']) {
    child[stream].on('data', (chunk) => {
      // The newest output is kept (what the CLI said last, e.g. why it exited).
      out[stream] += chunk.toString('utf8');
      if (out[stream].length > 2 * kMaxReported) out[stream] = out[stream].slice(-kMaxReported);
    });
  }
  const timer = setTimeout(() => killGroup(child), timeoutMs ?? 120000);
  child.on('close', (code, signal) => {
    clearTimeout(timer);
    exited = { exitCode: code, signal, stdout: out.stdout.slice(-kMaxReported), stderr: out.stderr.slice(-kMaxReported) };
    log({ event: 'exit', exitCode: code, signal, stderr: exited.stderr });
    child = null;
    failWaiters(new Error(`the CLI exited (${code ?? signal}) before asking its model: ${exited.stderr.slice(-2000)}`));
    for (const waiter of exitWaiters) waiter(exited);
    exitWaiters = [];
  });
  return { ok: true, port: server.address().port };
}

// How a turn on the warm server (or a launched CLI) ended: what "end" reports.
function turnEnded(result) {
  exited = result;
  log({ event: 'exit', exitCode: result.exitCode, signal: result.signal, stderr: result.stderr });
  failWaiters(new Error(`the turn ended (${result.exitCode ?? result.signal}) before asking its model: ${result.stderr.slice(-2000)}`));
  for (const waiter of exitWaiters) waiter(result);
  exitWaiters = [];
}

function serve({ command, env, cwd, timeoutMs, password }) {
  if (served) throw new Error('a server is already running');
  const [file, ...args] = command;
  const process_ = spawn(file, args, { cwd, env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
  log({ event: 'serve', command: file });
  const auth = 'Basic ' + Buffer.from(`opencode:${password ?? ''}`).toString('base64');
  let said = '';
  return new Promise((resolve) => {
    const timer = setTimeout(() => {
      killGroup(process_);
      resolve({ ok: false, error: `the server did not say where it listens within ${timeoutMs} ms: ${said.slice(-2000)}` });
    }, timeoutMs ?? 120000);
    const listen = (chunk) => {
      said = (said + chunk.toString('utf8')).slice(-kMaxReported);
      const found = said.match(/listening on (http:\/\/[^\s]+)/);
      if (found && !served) {
        clearTimeout(timer);
        served = { process: process_, url: found[1].replace(/\/$/, ''), auth };
        resolve({ ok: true, url: served.url });
      }
    };
    process_.stdout.on('data', listen);
    process_.stderr.on('data', listen);
    process_.on('close', (code, signal) => {
      clearTimeout(timer);
      log({ event: 'server-exit', exitCode: code, signal });
      if (served?.process === process_) served = null;
      if (turnRunning) {
        turnRunning = false;
        turnEnded({ exitCode: code, signal: signal ?? 'server-exited', stdout: '', stderr: said.slice(-kMaxReported) });
      }
      resolve({ ok: false, error: `the server exited (${code ?? signal}): ${said.slice(-2000)}` });
    });
  });
}

// One request to the warm server: the parsed JSON answer, or an Error naming the status.
async function toServer(method, path, query, body, signal) {
  const url = new URL(served.url + path);
  for (const [key, value] of Object.entries(query ?? {})) url.searchParams.set(key, value);
  const response = await fetch(url, {
    method,
    headers: { 'content-type': 'application/json', authorization: served.auth },
    body: body === undefined ? undefined : JSON.stringify(body),
    signal,
  });
  const text = await response.text();
  if (!response.ok) throw new Error(`${method} ${path}: HTTP ${response.status} ${text.slice(0, 2000)}`);
  return text ? JSON.parse(text) : null;
}

async function prompt({ request, text, timeoutMs }) {
  if (!served) return { ok: false, error: 'no server is running (op "serve" first)' };
  if (turnRunning) return { ok: false, error: 'a turn is already running on the server' };
  exited = null;
  pending = null;
  awaiting = null;
  const query = request.query ?? {};
  // The turn's MCP server, (re)placed on the instance: answered with every server's status.
  const added = await toServer(request.method, request.path, query, request.body);
  const name = request.body?.name;
  const status = added?.[name];
  if (!status || status.status !== 'connected') {
    return { ok: false, error: `the server could not connect its MCP server ${name}: ${JSON.stringify(status ?? added).slice(0, 2000)}` };
  }
  const session = await toServer('POST', '/session', query, {});
  turnRunning = true;
  log({ event: 'prompt', session: session.id });
  const abort = new AbortController();
  const timer = setTimeout(() => abort.abort(), timeoutMs ?? 120000);
  toServer('POST', `/session/${session.id}/message`, query, { parts: [{ type: 'text', text }] }, abort.signal).then(
    (answer) => ({ exitCode: 0, signal: null, stdout: JSON.stringify(answer?.info ?? {}).slice(0, kMaxReported), stderr: '' }),
    (error) => {
      if (abort.signal.aborted) toServer('POST', `/session/${session.id}/abort`, query, {}).catch(() => {});
      return { exitCode: null, signal: abort.signal.aborted ? 'timeout' : 'failed', stdout: '', stderr: String(error?.message ?? error) };
    },
  ).then((result) => {
    clearTimeout(timer);
    if (!turnRunning) return;
    turnRunning = false;
    turnEnded(result);
  });
  return { ok: true };
}

// The name (and namespace) the CLI would give `tool`, from how it named `like`, an offered tool.
function nameLike(turn, tool, like) {
  const model = like ? findOffered(turn.offered, like) : null;
  if (!model || !model.name.endsWith(portable(like))) return { name: portable(tool) };
  const prefix = model.name.slice(0, model.name.length - portable(like).length);
  return { name: prefix + portable(tool), namespace: model.namespace };
}

async function tools() {
  const turn = await whenPending();
  return { ok: true, tools: turn.offered.map((t) => t.name) };
}

async function call({ tool, arguments: args, like }) {
  const turn = await whenPending();
  const offered = findOffered(turn.offered, tool);
  const guessed = offered ?? nameLike(turn, tool, like);
  const name = guessed.name;
  const id = turn.api.startsWith('gemini') ? nextId('gemini-call-') : nextId(turn.api === 'anthropic' ? 'toolu_' : 'call_');
  awaiting = { id, name };
  pending = null;
  answerRequest(turn, { kind: 'call', id, name, namespace: guessed.namespace, arguments: args ?? {} });
  const next = await whenPending();
  const result = toolResult(next.api, next.body, awaiting);
  if (result === null) return { ok: false, error: `the CLI's next request carries no result for ${name}` };
  return { ok: true, offered: offered !== null, name, text: result.text.slice(0, kMaxReported), isError: result.isError };
}

async function end({ text }) {
  if (child || turnRunning || !exited) {
    const turn = await whenPending();
    pending = null;
    answerRequest(turn, { kind: 'text', text: text ?? 'Done.' });
    log({ event: 'answered-final' });
  }
  const result = exited ?? (await new Promise((resolve) => exitWaiters.push(resolve)));
  return { ok: true, ...result };
}

async function handle(request) {
  switch (request.op) {
    case 'launch':
      return launch(request);
    case 'tools':
      return tools();
    case 'call':
      return call(request);
    case 'end':
      return end(request);
    case 'serve':
      return serve(request);
    case 'prompt':
      return prompt(request);
    case 'requests':
      return { ok: true, requests };
    default:
      return { ok: false, error: `unknown op ${request.op}` };
  }
}

server.listen(0, '127.0.0.1', () => {
  process.stdout.write(JSON.stringify({ ok: true, port: server.address().port }) + '\n');
  const lines = createInterface({ input: process.stdin });
  let chain = Promise.resolve();
  lines.on('line', (line) => {
    chain = chain.then(async () => {
      let answer;
      try {
        answer = await handle(JSON.parse(line));
      } catch (error) {
        answer = { ok: false, error: String(error?.message ?? error) };
      }
      process.stdout.write(JSON.stringify(answer) + '\n');
    });
  });
  lines.on('close', () => {
    chain.then(() => {
      stopAll();
      process.exit(0);
    });
  });
});

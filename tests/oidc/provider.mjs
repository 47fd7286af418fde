// A real OpenID provider for tests (npm oidc-provider, OpenID-certified), on 127.0.0.1, a free
// port. Prints its issuer URL as the first line of stdout, then serves until SIGTERM/SIGINT.
//
//   node tests/oidc/provider.mjs [--console_redirect_uri=URI] [--console_secret=S |
//       --console_secret_file=FILE]
//       [--tests_secret=S] [--resource=URI] [--alg=RS256|ES256|EdDSA] [--keys=N]
//       [--users=<id>=<group>,<group>;<id>=<group>...]
//       [--https_cert=FILE --https_key=FILE --issuer=https://NAME:PORT [--listen_host=H]]
//
// HTTPS mode (the compose deployment's provider container, deploy/README.md): with --https_cert
// and --https_key (PEM; deploy/gen-certs.sh's `oidc/`) it serves TLS on --listen_host (default
// 0.0.0.0) at the port of --issuer (an https URL naming the host the services reach it by), and
// that URL is its issuer. Without them it is plain HTTP on 127.0.0.1 at a free port, as above.
//
// Keys: N signing keys (default 1) generated per run; the first signs. POST /test/rotate (or
// SIGUSR2) adds a new key, which signs from then on; the old ones stay published.
// Clients:
//   sharedos-console   confidential web client (authorization code + PKCE; client_secret_basic
//                      or _post), redirect URI --console_redirect_uri, post-logout redirect to
//                      the redirect URI's origin + "/".
//   sharedosctl        public client for the device authorization grant (RFC 8628).
//   sharedos-tests     confidential client for client_credentials (secret --tests_secret).
// Every access token for the resource --resource (default urn:sharedos:grpc, the gRPC audience) is
// a JWT signed with the current key.
// Users (devInteractions login form: any password): alice (group sharedos-reviewers-world-1), bob
// (sharedos-reviewers-world-2), ops (sharedos-admins), carol (no SharedOS group). Claims: sub,
// email (<user>@example.test), groups.
// Test-only endpoints (not part of any real provider):
//   POST /test/rotate                       → {"kid": new kid}
//   POST /test/token {"user","resource"?}   → {"access_token"}: a real access token minted by the
//        provider's own AccessToken model for that user (password-less; claims as a sign-in gives)
//   POST /test/sign {"payload", "header"?}  → {"token"}: a JWS over any payload with the current
//        key (expired, other audience, other issuer... tokens for negative tests)
// Every refused grant at the token endpoint is one stderr line "provider: grant.error <error>:
// <detail>" (the detail the answer does not carry).
import http from 'node:http';
import https from 'node:https';
import fs from 'node:fs';
import crypto from 'node:crypto';

import Provider from 'oidc-provider';
import * as jose from 'jose';

const args = Object.fromEntries(process.argv.slice(2).map((a) => {
  const m = /^--([a-z_]+)=(.*)$/.exec(a);
  if (!m) {
    process.stderr.write(`provider: bad argument ${a}\n`);
    process.exit(2);
  }
  return [m[1], m[2]];
}));
const alg = args.alg ?? 'RS256';
const resource = args.resource ?? 'urn:sharedos:grpc';
const consoleRedirect = args.console_redirect_uri ?? 'http://127.0.0.1:1/oidc/callback';
// --console_secret_file: the secret's first line (the compose OIDC profile mounts the
// deployment's secret, so it never appears on a command line).
const consoleSecret = args.console_secret_file
  ? fs.readFileSync(args.console_secret_file, 'utf8').split('\n')[0].trim()
  : (args.console_secret ?? 'console-secret-for-tests-only-0123456789');
const testsSecret = args.tests_secret ?? 'tests-secret-for-tests-only-0123456789';

const accounts = {
  alice: ['sharedos-reviewers-world-1'],
  bob: ['sharedos-reviewers-world-2'],
  ops: ['sharedos-admins'],
  carol: ['some-other-team'],
};
// --users=<id>=<group>,<group>;<id>=... adds users (e.g. the demo world's user-alice).
for (const entry of (args.users ?? '').split(';').filter(Boolean)) {
  const [id, groups = ''] = entry.split('=');
  accounts[id] = groups.split(',').filter(Boolean);
}
function accountClaims(id) {
  return { sub: id, email: `${id}@example.test`, email_verified: true, groups: accounts[id] };
}

// Private JWKs, newest (signing) first.
const keys = [];
async function newKey() {
  const options = alg === 'EdDSA' ? { crv: 'Ed25519', extractable: true } : { extractable: true };
  const { privateKey } = await jose.generateKeyPair(alg, options);
  const jwk = await jose.exportJWK(privateKey);
  jwk.kid = crypto.randomBytes(12).toString('base64url');
  jwk.alg = alg;
  jwk.use = 'sig';
  keys.unshift(jwk);
  return jwk.kid;
}

let server;
let issuer;
let listenLater; // HTTPS mode: listen once the handler is in place (no request is ever dropped)
if (args.https_cert || args.https_key || args.issuer) {
  if (!args.https_cert || !args.https_key || !args.issuer) {
    process.stderr.write('provider: HTTPS mode needs --https_cert, --https_key and --issuer\n');
    process.exit(2);
  }
  const url = new URL(args.issuer);
  if (url.protocol !== 'https:' || !url.port || url.pathname !== '/') {
    process.stderr.write('provider: --issuer: https://NAME:PORT\n');
    process.exit(2);
  }
  server = https.createServer({
    cert: fs.readFileSync(args.https_cert), key: fs.readFileSync(args.https_key),
  });
  listenLater = () => new Promise((resolve) => {
    server.listen(Number(url.port), args.listen_host ?? '0.0.0.0', resolve);
  });
  issuer = url.origin;
} else {
  server = http.createServer();
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  issuer = `http://127.0.0.1:${server.address().port}`;
}
const cookieKeys = [crypto.randomBytes(32).toString('base64url')];

function resourceServerInfo() {
  return {
    scope: 'sharedos',
    audience: resource,
    accessTokenTTL: 600,
    accessTokenFormat: 'jwt',
    jwt: { sign: { alg } },
  };
}

function buildProvider() {
  const redirectOrigin = new URL(consoleRedirect).origin;
  const provider = new Provider(issuer, {
    clients: [
      {
        client_id: 'sharedos-console',
        client_secret: consoleSecret,
        redirect_uris: [consoleRedirect],
        post_logout_redirect_uris: [`${redirectOrigin}/`],
        grant_types: ['authorization_code', 'refresh_token'],
        response_types: ['code'],
        token_endpoint_auth_method: 'client_secret_basic',
        id_token_signed_response_alg: alg,
      },
      {
        client_id: 'sharedosctl',
        token_endpoint_auth_method: 'none',
        grant_types: ['urn:ietf:params:oauth:grant-type:device_code', 'refresh_token'],
        response_types: [],
        redirect_uris: [],
        id_token_signed_response_alg: alg,
      },
      {
        client_id: 'sharedos-tests',
        client_secret: testsSecret,
        grant_types: ['client_credentials'],
        response_types: [],
        redirect_uris: [],
        id_token_signed_response_alg: alg,
      },
    ],
    clientAuthMethods: ['client_secret_basic', 'client_secret_post', 'none'],
    jwks: { keys },
    cookies: { keys: cookieKeys },
    pkce: { required: () => true },
    scopes: ['openid', 'email', 'groups', 'offline_access', 'sharedos'],
    claims: { openid: ['sub'], email: ['email', 'email_verified'], groups: ['groups'] },
    findAccount: async (_ctx, id) => (accounts[id]
      ? { accountId: id, claims: async () => accountClaims(id) }
      : undefined),
    extraTokenClaims: async (_ctx, token) => (token.accountId && accounts[token.accountId]
      ? { email: `${token.accountId}@example.test`, groups: accounts[token.accountId] }
      : undefined),
    loadExistingGrant: async (ctx) => {
      // Consent is implied for the test's own clients (no consent page to drive).
      const grantId = ctx.oidc.result?.consent?.grantId
        || ctx.oidc.session.grantIdFor(ctx.oidc.client.clientId);
      if (grantId) return ctx.oidc.provider.Grant.find(grantId);
      const grant = new ctx.oidc.provider.Grant({
        clientId: ctx.oidc.client.clientId,
        accountId: ctx.oidc.session.accountId,
      });
      grant.addOIDCScope('openid email groups offline_access');
      grant.addOIDCClaims(['sub', 'email', 'email_verified', 'groups']);
      grant.addResourceScope(resource, 'sharedos');
      await grant.save();
      return grant;
    },
    features: {
      devInteractions: { enabled: true },
      deviceFlow: { enabled: true },
      clientCredentials: { enabled: true },
      revocation: { enabled: true },
      rpInitiatedLogout: { enabled: true },
      resourceIndicators: {
        enabled: true,
        defaultResource: async (_ctx, _client, oneOf) => oneOf ?? resource,
        useGrantedResource: async () => true,
        getResourceServerInfo: async (_ctx, indicator) => {
          if (indicator !== resource) throw new Provider.errors.InvalidTarget();
          return resourceServerInfo();
        },
      },
    },
    ttl: {
      AccessToken: 600, AuthorizationCode: 60, IdToken: 600, DeviceCode: 600,
      Interaction: 600, Session: 3600, Grant: 3600, RefreshToken: 3600,
      ClientCredentials: 600,
    },
  });
  // Why the token endpoint refused a grant (e.g. "authorization code already consumed",
  // "code_verifier does not match code_challenge"), one line on stderr: the answer itself says
  // only invalid_grant, and tests tell a replayed code from a wrong verifier by this line.
  provider.on('grant.error', (_ctx, err) => {
    process.stderr.write(`provider: grant.error ${err.error}: ${err.error_detail ?? ''}\n`);
  });
  // Test-only endpoints, inside the provider's own request context.
  provider.use(async (ctx, next) => {
    if (ctx.method !== 'POST' || !ctx.path.startsWith('/test/')) return next();
    const body = await readJson(ctx.req);
    ctx.type = 'application/json';
    if (ctx.path === '/test/rotate') {
      const kid = await rotate();
      ctx.body = { kid };
    } else if (ctx.path === '/test/token') {
      const user = body.user;
      if (!accounts[user]) {
        ctx.status = 400;
        ctx.body = { error: 'unknown user' };
        return undefined;
      }
      const target = body.resource ?? resource;
      const client = await provider.Client.find('sharedos-tests');
      const grant = new provider.Grant({ clientId: client.clientId, accountId: user });
      grant.addResourceScope(target, 'sharedos');
      const grantId = await grant.save();
      const token = new provider.AccessToken({
        accountId: user,
        client,
        grantId,
        gty: 'test',
        scope: 'sharedos',
        resourceServer: new provider.ResourceServer(target, {
          ...resourceServerInfo(), audience: target,
        }),
        extra: { email: `${user}@example.test`, groups: accounts[user] },
      });
      ctx.body = { access_token: await token.save() };
    } else if (ctx.path === '/test/sign') {
      const key = await jose.importJWK(keys[0], alg);
      ctx.body = {
        token: await new jose.CompactSign(new TextEncoder().encode(JSON.stringify(body.payload)))
          .setProtectedHeader({ alg, kid: keys[0].kid, typ: 'at+jwt', ...(body.header ?? {}) })
          .sign(key),
      };
    } else {
      ctx.status = 404;
      ctx.body = { error: 'not found' };
    }
    return undefined;
  });
  return provider;
}

function readJson(req) {
  return new Promise((resolve, reject) => {
    let text = '';
    req.setEncoding('utf8');
    req.on('data', (chunk) => {
      text += chunk;
      if (text.length > 65536) req.destroy(new Error('body too large'));
    });
    req.on('end', () => {
      try { resolve(text ? JSON.parse(text) : {}); } catch (e) { reject(e); }
    });
    req.on('error', reject);
  });
}

let handler;
async function rotate() {
  const kid = await newKey();
  handler = buildProvider().callback();
  return kid;
}

const initialKeys = Math.max(1, Number(args.keys ?? 1));
for (let i = 0; i < initialKeys; i += 1) await newKey();
handler = buildProvider().callback();
server.on('request', (req, res) => handler(req, res));
if (listenLater) await listenLater();
process.on('SIGUSR2', () => { rotate(); });
for (const signal of ['SIGTERM', 'SIGINT']) {
  process.on(signal, () => { server.close(); process.exit(0); });
}
process.stdout.write(`${issuer}\n`);

// A typed, thin host client for SharedOS over @grpc/grpc-js.
//
// What every host does, and nothing more: open a turn (with the MCP URL and token a harness
// needs), invoke a tool, finish it, and turn a `no_matching_grant` denial into an escalation that
// names the authority the denial described (`requiredAuthority`); read an escalation's status;
// and, for a reviewer's tooling, approve or deny it. Every call carries a bearer credential; TLS
// verifies the server against a CA file. The message types are the ones generated from proto/
// by ts-proto (generate.sh); this module declares no message type, only small result views.
//
// Refusals are answers, not exceptions: a denied tool call is an Invocation whose status is
// "denied". A gRPC error (bad credential, malformed request, dependency down) rejects the
// promise with @grpc/grpc-js's ServiceError unchanged.

import { randomUUID } from "crypto";
import { readFileSync } from "fs";

import * as grpc from "@grpc/grpc-js";

import {
  EnvelopeClient,
  FinishTurnRequest,
  FinishTurnResponse,
  OpenTurnResponse,
  Runtime,
} from "../gen/sharedos/envelope/v1/envelope";
import {
  EscalationDecision,
  EscalationRecord,
  EscalationRecordStatus,
  GrantStoreClient,
} from "../gen/sharedos/grantstore/v1/grantstore";
import { Address } from "../gen/sharedos/protocol/v1/common";
import { ExecutionRequest, ExecutionResult, ExecutionStatus } from "../gen/sharedos/protocol/v1/execution";
import { CapabilityRequest } from "../gen/sharedos/protocol/v1/grant";
import { ToolResult, ToolResultStatus } from "../gen/sharedos/protocol/v1/tool";

export * as envelope from "../gen/sharedos/envelope/v1/envelope";
export * as grantstore from "../gen/sharedos/grantstore/v1/grantstore";
export * as protocol from "../gen/sharedos/protocol/v1/grant";

/** `"agent:a"`, `"human:alice"`, `"group:g"` or `"service:s"` as an Address. */
export function address(text: string): Address {
  const colon = text.indexOf(":");
  const kind = text.slice(0, colon);
  const id = text.slice(colon + 1);
  if (colon < 0 || id === "") throw new Error(`address ${JSON.stringify(text)}: kind:id`);
  switch (kind) {
    case "agent":
      return { agentId: id };
    case "human":
      return { humanUserId: id };
    case "group":
      return { groupConversationId: id };
    case "service":
      return { serviceId: id };
  }
  throw new Error(`address ${JSON.stringify(text)}: kind is agent, human, group or service`);
}

function addressText(value: Address | undefined): string {
  if (value?.agentId) return `agent:${value.agentId}`;
  if (value?.humanUserId) return `human:${value.humanUserId}`;
  if (value?.groupConversationId) return `group:${value.groupConversationId}`;
  if (value?.serviceId) return `service:${value.serviceId}`;
  return "";
}

/** "EXECUTION_STATUS_SUCCEEDED" → "succeeded". */
function lower(name: string, prefix: string): string {
  return (name.startsWith(prefix) ? name.slice(prefix.length) : name).toLowerCase();
}

export interface ConnectionOptions {
  /** A PEM CA file: TLS, the server's certificate verified against it. Unset: plaintext, which
   * SharedOS accepts on loopback only. */
  caFile?: string;
  /** The name expected in the server's certificate when it is not the target's host. */
  serverName?: string;
  /** Per-call deadline in milliseconds (default 30 s). */
  timeoutMs?: number;
}

/** Where SharedOS is and the bearer credential sent on every call. */
export class Connection {
  readonly credentials: grpc.ChannelCredentials;
  readonly options: grpc.ClientOptions;
  readonly metadata: grpc.Metadata;
  readonly timeoutMs: number;

  constructor(
    readonly target: string,
    token: string,
    options: ConnectionOptions = {},
  ) {
    if (!token) throw new Error("token: a bearer credential is required");
    this.credentials = options.caFile
      ? grpc.credentials.createSsl(readFileSync(options.caFile))
      : grpc.credentials.createInsecure();
    this.options = options.serverName
      ? { "grpc.ssl_target_name_override": options.serverName }
      : {};
    this.metadata = new grpc.Metadata();
    this.metadata.set("authorization", `Bearer ${token}`);
    this.timeoutMs = options.timeoutMs ?? 30_000;
  }

  /** As the constructor, the token read from a file (first line, trimmed). */
  static fromTokenFile(target: string, tokenFile: string, options: ConnectionOptions = {}) {
    const token = readFileSync(tokenFile, "utf8").split("\n")[0].trim();
    return new Connection(target, token, options);
  }

  deadline(): grpc.CallOptions {
    return { deadline: new Date(Date.now() + this.timeoutMs) };
  }
}

type Unary<Req, Res> = (
  request: Req,
  metadata: grpc.Metadata,
  options: Partial<grpc.CallOptions>,
  callback: (error: grpc.ServiceError | null, response: Res) => void,
) => grpc.ClientUnaryCall;

function call<Req, Res>(
  client: grpc.Client,
  method: Unary<Req, Res>,
  connection: Connection,
  request: Req,
): Promise<Res> {
  return new Promise((resolve, reject) =>
    method.call(client, request, connection.metadata, connection.deadline(), (error, response) =>
      error ? reject(error) : resolve(response),
    ),
  );
}

/** One tool call's answer: status "succeeded", "denied" or "failed". */
export interface Invocation {
  status: string;
  code: string;
  message: string;
  output: unknown;
  /** The authority a reviewer would grant, on a no_matching_grant denial. */
  requiredAuthority?: CapabilityRequest;
  result: ToolResult;
}

/** How a turn ended ("succeeded", "escalated", "failed", …) and, escalated, its escalation. */
export interface TurnEnd {
  status: string;
  escalationId: string;
  result: ExecutionResult;
}

/** An escalation as its reviewer left it: "pending", "approved" or "denied". */
export interface EscalationStatus {
  escalationId: string;
  status: string;
  reviewer: string;
  grantId: string;
  requestedAuthority?: CapabilityRequest;
  record: EscalationRecord;
}

function turnEnd(result: ExecutionResult | undefined, escalationId: string): TurnEnd {
  const ended = result ?? ExecutionResult.fromPartial({});
  return {
    status: lower(ExecutionStatus[ended.status] ?? "", "EXECUTION_STATUS_"),
    escalationId,
    result: ended,
  };
}

function escalationStatus(record: EscalationRecord | undefined): EscalationStatus {
  const r = record ?? EscalationRecord.fromPartial({});
  return {
    escalationId: r.escalationId,
    status: lower(EscalationRecordStatus[r.status] ?? "", "ESCALATION_RECORD_STATUS_"),
    reviewer: addressText(r.reviewer),
    grantId: r.grantId,
    requestedAuthority: r.escalation?.requestedAuthority,
    record: r,
  };
}

/** The turn ended at admission (e.g. no_matching_grant, authority_unavailable). */
export class TurnRefused extends Error {
  constructor(readonly end: TurnEnd) {
    super(`turn refused at admission: ${end.status} ${end.result.error?.code ?? ""}`);
  }
}

export interface OpenTurnOptions {
  namespace: string;
  /** "agent:<id>". */
  agent: string;
  /** The human whose resources the turn acts on; also the authority unless `authority` is set. */
  owner: string;
  authority?: string;
  purpose: string;
  tools: string[];
  /** The message that starts the turn (any JSON value), from the owner. */
  message: unknown;
  /** Default: the namespaces of `tools` ("files" for "files.read"). */
  toolNamespaces?: string[];
  /** Driven by a harness over MCP: Turn.mcpUrl and Turn.mcpToken. */
  mcp?: boolean;
  executionId?: string;
  traceId?: string;
}

/** An open turn: invoke tools, then end it once (finish, escalate or cancel). */
export class Turn {
  readonly id: string;
  private calls = 0;

  constructor(
    private readonly host: Host,
    readonly opened: OpenTurnResponse,
    readonly executionId: string,
    readonly traceId: string,
  ) {
    this.id = opened.turnId;
  }

  /** The MCP endpoint a harness connects to (an MCP turn only; else ""). */
  get mcpUrl(): string {
    return this.opened.mcp?.url ?? "";
  }

  /** The execution token a harness sends as its bearer (an MCP turn only). */
  get mcpToken(): string {
    return this.opened.mcp?.token ?? "";
  }

  /** Calls `tool`; a refusal is an answer (status "denied" or "failed"). */
  async invoke(tool: string, args: Record<string, unknown> = {}): Promise<Invocation> {
    this.calls += 1;
    const answer = await this.host.envelopeCall(this.host.envelope.invokeTool, {
      turnId: this.id,
      call: {
        id: `call-${this.calls}`,
        tool,
        arguments: args,
        traceId: this.traceId,
        requestedAt: new Date(),
      },
    });
    const result = answer.result ?? ToolResult.fromPartial({});
    return {
      status: lower(ToolResultStatus[result.status] ?? "", "TOOL_RESULT_STATUS_"),
      code: result.error?.code ?? "",
      message: result.error?.message ?? "",
      output: result.output,
      requiredAuthority: answer.requiredAuthority,
      result,
    };
  }

  /** Ends the turn succeeded with `output` (any JSON value). */
  finish(output: unknown): Promise<TurnEnd> {
    return this.end({ turnId: this.id, complete: { output } });
  }

  /** Ends the turn escalated: a reviewer is asked for `requiredAuthority` (a denial's, passed
   * unchanged). TurnEnd.escalationId names the escalation to track. */
  escalate(reason: string, requiredAuthority?: CapabilityRequest): Promise<TurnEnd> {
    return this.end({ turnId: this.id, escalate: { reason, requestedAuthority: requiredAuthority } });
  }

  async cancel(): Promise<TurnEnd> {
    const answer = await this.host.envelopeCall(this.host.envelope.cancelTurn, { turnId: this.id });
    return turnEnd(answer.result, answer.escalationId);
  }

  private async end(request: Partial<FinishTurnRequest>): Promise<TurnEnd> {
    const answer: FinishTurnResponse = await this.host.envelopeCall(
      this.host.envelope.finishTurn,
      FinishTurnRequest.fromPartial(request),
    );
    return turnEnd(answer.result, answer.escalationId);
  }
}

/** What a host backend does with its host credential. `grantStore` reaches the GrantStore
 * (escalation status) when it is served elsewhere; by default the same connection, as in
 * sharedosd. */
export class Host {
  readonly envelope: EnvelopeClient;
  private readonly grants: GrantStoreClient;
  private readonly grantConnection: Connection;

  constructor(
    private readonly connection: Connection,
    options: { grantStore?: Connection } = {},
  ) {
    this.grantConnection = options.grantStore ?? connection;
    this.envelope = new EnvelopeClient(connection.target, connection.credentials, connection.options);
    this.grants = new GrantStoreClient(
      this.grantConnection.target,
      this.grantConnection.credentials,
      this.grantConnection.options,
    );
  }

  /** Opens a turn; rejects with TurnRefused when it ends at admission. */
  async openTurn(options: OpenTurnOptions): Promise<Turn> {
    const executionId = options.executionId ?? `exec-${randomUUID()}`;
    const traceId = options.traceId ?? `trace-${randomUUID()}`;
    const now = new Date();
    const agent = address(options.agent);
    const owner = address(options.owner);
    const request = ExecutionRequest.fromPartial({
      version: "1",
      executionId,
      agent,
      tools: options.tools,
      context: {
        namespaceId: options.namespace,
        actor: agent,
        authority: options.authority ? address(options.authority) : owner,
        owner,
        purpose: options.purpose,
        traceId,
        enabledToolNamespaces:
          options.toolNamespaces ?? [...new Set(options.tools.map((t) => t.split(".")[0]))].sort(),
        now,
      },
      message: {
        version: "1",
        id: `msg-${randomUUID()}`,
        sender: owner,
        receiver: agent,
        purpose: options.purpose,
        payload: options.message,
        traceId,
        createdAt: now,
      },
    });
    const opened = await this.envelopeCall(this.envelope.openTurn, {
      executionRequest: request,
      runtime: options.mcp ? Runtime.RUNTIME_MCP : Runtime.RUNTIME_DRIVER,
    });
    if (opened.result) throw new TurnRefused(turnEnd(opened.result, ""));
    return new Turn(this, opened, executionId, traceId);
  }

  /** An escalation of the host's scope, as the reviewer left it. */
  async escalation(escalationId: string): Promise<EscalationStatus> {
    const answer = await call(this.grants, this.grants.getEscalation, this.grantConnection, {
      escalationId,
    });
    return escalationStatus(answer.escalation);
  }

  /** @internal One Envelope call with this host's credential and deadline. */
  envelopeCall<Req, Res>(method: Unary<Req, Res>, request: Req): Promise<Res> {
    return call(this.envelope, method, this.connection, request);
  }

  close(): void {
    this.envelope.close();
    this.grants.close();
  }
}

/** What a reviewer's credential does: decide the escalations addressed to it (`connection`
 * reaches the GrantStore). */
export class Reviewer {
  private readonly grants: GrantStoreClient;

  constructor(private readonly connection: Connection) {
    this.grants = new GrantStoreClient(connection.target, connection.credentials, connection.options);
  }

  approve(escalationId: string, note = ""): Promise<EscalationStatus> {
    return this.resolve(escalationId, EscalationDecision.ESCALATION_DECISION_APPROVE, note);
  }

  deny(escalationId: string, note = ""): Promise<EscalationStatus> {
    return this.resolve(escalationId, EscalationDecision.ESCALATION_DECISION_DENY, note);
  }

  close(): void {
    this.grants.close();
  }

  private async resolve(
    escalationId: string,
    decision: EscalationDecision,
    note: string,
  ): Promise<EscalationStatus> {
    const answer = await call(this.grants, this.grants.resolveEscalation, this.connection, {
      escalationId,
      decision,
      note,
      reviewer: undefined,
      narrowing: undefined,
      grantId: "",
      onBehalfOfReviewer: false,
    });
    return escalationStatus(answer.escalation);
  }
}

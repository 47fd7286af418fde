"""A typed, thin host client for SharedOS over gRPC (Debian's python3-grpcio).

What every host does, and nothing more: open a turn (with the MCP URL and token a harness needs),
invoke a tool, finish it, and turn a ``no_matching_grant`` denial into an escalation that names
the authority the denial described (``required_authority``); read an escalation's status; and, for
a reviewer's own tooling, approve or deny it. Every call carries a bearer credential; TLS verifies
the server against a CA file. The messages are the ones generated from ``proto/`` (see
``generate.sh``); this module adds no message type of its own, only small result views.

Refusals are answers, not exceptions: a denied tool call is an ``Invocation`` whose ``status`` is
``"denied"``; a gRPC error (bad credential, malformed request, dependency down) raises
``grpc.RpcError`` unchanged.
"""

from __future__ import annotations

import dataclasses
import time
import uuid
from typing import Any, Mapping, Optional, Sequence

import grpc
from google.protobuf import json_format, timestamp_pb2

from sharedos.envelope.v1 import envelope_pb2, envelope_pb2_grpc
from sharedos.grantstore.v1 import grantstore_pb2, grantstore_pb2_grpc
from sharedos.protocol.v1 import common_pb2, execution_pb2, grant_pb2, tool_pb2

__all__ = [
    "Connection",
    "Host",
    "Turn",
    "Invocation",
    "TurnEnd",
    "EscalationStatus",
    "Reviewer",
    "address",
]


def address(text: str) -> common_pb2.Address:
    """``"agent:a"``, ``"human:alice"``, ``"group:g"`` or ``"service:s"`` as an Address."""
    kind, _, ident = text.partition(":")
    fields = {"agent": "agent_id", "human": "human_user_id", "group": "group_conversation_id",
              "service": "service_id"}
    if kind not in fields or not ident:
        raise ValueError(f"address {text!r}: kind:id with kind agent, human, group or service")
    return common_pb2.Address(**{fields[kind]: ident})


def _now() -> timestamp_pb2.Timestamp:
    stamp = timestamp_pb2.Timestamp()
    stamp.FromNanoseconds(time.time_ns())
    return stamp


def _lower(enum_name: str, prefix: str) -> str:
    return enum_name[len(prefix):].lower() if enum_name.startswith(prefix) else enum_name.lower()


class Connection:
    """A channel to SharedOS and the bearer credential sent on every call.

    ``ca_file`` set: TLS, the server's certificate verified against that CA (and
    ``server_name`` when the target's host is not the certificate's name); unset: plaintext,
    which SharedOS accepts on loopback only.
    """

    def __init__(self, target: str, token: str, *, ca_file: Optional[str] = None,
                 server_name: Optional[str] = None, timeout: float = 30.0) -> None:
        if not token:
            raise ValueError("token: a bearer credential is required")
        if ca_file:
            with open(ca_file, "rb") as pem:
                credentials = grpc.ssl_channel_credentials(root_certificates=pem.read())
            options = [("grpc.ssl_target_name_override", server_name)] if server_name else []
            self.channel = grpc.secure_channel(target, credentials, options=options)
        else:
            self.channel = grpc.insecure_channel(target)
        self.metadata = (("authorization", f"Bearer {token}"),)
        self.timeout = timeout

    @classmethod
    def from_token_file(cls, target: str, token_file: str, **kwargs: Any) -> "Connection":
        """As the constructor, with the token read from a file (first line, trimmed)."""
        with open(token_file, encoding="utf-8") as f:
            return cls(target, f.readline().strip(), **kwargs)

    def close(self) -> None:
        self.channel.close()

    def __enter__(self) -> "Connection":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


@dataclasses.dataclass(frozen=True)
class Invocation:
    """One tool call's answer: ``status`` is ``"succeeded"``, ``"denied"`` or ``"failed"``."""

    status: str
    code: str
    message: str
    output: Any
    # The authority a reviewer would grant, on a ``no_matching_grant`` denial.
    required_authority: Optional[grant_pb2.CapabilityRequest]
    result: tool_pb2.ToolResult

    @property
    def succeeded(self) -> bool:
        return self.status == "succeeded"


@dataclasses.dataclass(frozen=True)
class TurnEnd:
    """How a turn ended: ``status`` is ``"succeeded"``, ``"escalated"``, ``"failed"``, …;
    ``escalation_id`` names the stored escalation of an escalated turn."""

    status: str
    escalation_id: str
    result: execution_pb2.ExecutionResult


@dataclasses.dataclass(frozen=True)
class EscalationStatus:
    """``status``: ``"pending"``, ``"approved"`` or ``"denied"``; ``grant_id`` once approved."""

    escalation_id: str
    status: str
    reviewer: str
    grant_id: str
    requested_authority: grant_pb2.CapabilityRequest
    record: grantstore_pb2.EscalationRecord


def _address_text(value: common_pb2.Address) -> str:
    kind = value.WhichOneof("kind")
    prefix = {"agent_id": "agent", "human_user_id": "human", "group_conversation_id": "group",
              "service_id": "service"}.get(kind or "", "")
    return f"{prefix}:{getattr(value, kind)}" if kind else ""


def _escalation_status(record: grantstore_pb2.EscalationRecord) -> EscalationStatus:
    return EscalationStatus(
        escalation_id=record.escalation_id,
        status=_lower(grantstore_pb2.EscalationRecordStatus.Name(record.status),
                      "ESCALATION_RECORD_STATUS_"),
        reviewer=_address_text(record.reviewer),
        grant_id=record.grant_id,
        requested_authority=record.escalation.requested_authority,
        record=record)


def _turn_end(result: execution_pb2.ExecutionResult, escalation_id: str) -> TurnEnd:
    return TurnEnd(
        status=_lower(execution_pb2.ExecutionStatus.Name(result.status), "EXECUTION_STATUS_"),
        escalation_id=escalation_id, result=result)


class Turn:
    """An open turn: invoke tools, then end it once (finish, escalate or cancel)."""

    def __init__(self, host: "Host", opened: envelope_pb2.OpenTurnResponse,
                 request: execution_pb2.ExecutionRequest) -> None:
        self._host = host
        self.opened = opened
        self.id = opened.turn_id
        self.execution_id = request.execution_id
        self.trace_id = request.context.trace_id
        self._calls = 0

    @property
    def mcp_url(self) -> str:
        """The MCP endpoint a harness connects to (an MCP turn only; else "")."""
        return self.opened.mcp.url

    @property
    def mcp_token(self) -> str:
        """The execution token the harness sends as its bearer (an MCP turn only)."""
        return self.opened.mcp.token

    def invoke(self, tool: str, arguments: Optional[Mapping[str, Any]] = None) -> Invocation:
        """Calls ``tool``; a refusal is an answer (``status`` ``"denied"``/``"failed"``)."""
        self._calls += 1
        call = tool_pb2.ToolCall(id=f"call-{self._calls}", tool=tool, trace_id=self.trace_id,
                                 requested_at=_now())
        json_format.ParseDict(dict(arguments or {}), call.arguments)
        answer = self._host._envelope.InvokeTool(
            envelope_pb2.InvokeToolRequest(turn_id=self.id, call=call),
            metadata=self._host._conn.metadata, timeout=self._host._conn.timeout)
        result = answer.result
        outcome = result.WhichOneof("outcome")
        return Invocation(
            status=_lower(tool_pb2.ToolResultStatus.Name(result.status), "TOOL_RESULT_STATUS_"),
            code=result.error.code if outcome == "error" else "",
            message=result.error.message if outcome == "error" else "",
            output=json_format.MessageToDict(result.output) if outcome == "output" else None,
            required_authority=(answer.required_authority
                                if answer.HasField("required_authority") else None),
            result=result)

    def finish(self, output: Any = None) -> TurnEnd:
        """Ends the turn succeeded with ``output`` (any JSON value)."""
        request = envelope_pb2.FinishTurnRequest(turn_id=self.id)
        json_format.ParseDict(output, request.complete.output)
        return self._finish(request)

    def escalate(self, reason: str,
                 required_authority: Optional[grant_pb2.CapabilityRequest] = None) -> TurnEnd:
        """Ends the turn escalated: a reviewer is asked for ``required_authority`` (a denial's,
        passed unchanged). ``TurnEnd.escalation_id`` names the escalation to track."""
        request = envelope_pb2.FinishTurnRequest(turn_id=self.id)
        request.escalate.reason = reason
        if required_authority is not None:
            request.escalate.requested_authority.CopyFrom(required_authority)
        return self._finish(request)

    def cancel(self) -> TurnEnd:
        answer = self._host._envelope.CancelTurn(
            envelope_pb2.CancelTurnRequest(turn_id=self.id),
            metadata=self._host._conn.metadata, timeout=self._host._conn.timeout)
        return _turn_end(answer.result, answer.escalation_id)

    def _finish(self, request: envelope_pb2.FinishTurnRequest) -> TurnEnd:
        answer = self._host._envelope.FinishTurn(request, metadata=self._host._conn.metadata,
                                                 timeout=self._host._conn.timeout)
        return _turn_end(answer.result, answer.escalation_id)


class TurnRefused(Exception):
    """The turn ended at admission (e.g. ``no_matching_grant``, ``authority_unavailable``)."""

    def __init__(self, end: TurnEnd) -> None:
        super().__init__(f"turn refused at admission: {end.status} {end.result.error.code}")
        self.end = end


class Host:
    """What a host backend does with its host credential.

    ``connection`` reaches the Envelope; ``grant_store`` the GrantStore (escalation status) when
    it is served elsewhere (the services run one by one) — by default the same connection, as
    in ``sharedosd``.
    """

    def __init__(self, connection: Connection, *,
                 grant_store: Optional[Connection] = None) -> None:
        self._conn = connection
        self._grant_conn = grant_store or connection
        self._envelope = envelope_pb2_grpc.EnvelopeStub(connection.channel)
        self._grants = grantstore_pb2_grpc.GrantStoreStub(self._grant_conn.channel)

    def open_turn(self, *, namespace: str, agent: str, owner: str, purpose: str,
                  tools: Sequence[str], message: Any, authority: Optional[str] = None,
                  tool_namespaces: Sequence[str] = (), mcp: bool = False,
                  execution_id: Optional[str] = None, trace_id: Optional[str] = None) -> Turn:
        """Opens a turn of ``agent`` (``"agent:<id>"``) acting for ``owner`` (and
        ``authority``, default the owner) in ``namespace``, offered ``tools``, started by
        ``message`` from the owner. ``mcp``: the turn is driven by a harness over MCP
        (``Turn.mcp_url``, ``Turn.mcp_token``). Raises ``TurnRefused`` when it ends at
        admission."""
        execution_id = execution_id or f"exec-{uuid.uuid4()}"
        trace_id = trace_id or f"trace-{uuid.uuid4()}"
        now = _now()
        agent_address = address(agent)
        owner_address = address(owner)
        request = execution_pb2.ExecutionRequest(version="1", execution_id=execution_id,
                                                 tools=list(tools))
        request.agent.CopyFrom(agent_address)
        context = request.context
        context.namespace_id = namespace
        context.actor.CopyFrom(agent_address)
        context.authority.CopyFrom(address(authority) if authority else owner_address)
        context.owner.CopyFrom(owner_address)
        context.purpose = purpose
        context.trace_id = trace_id
        context.enabled_tool_namespaces.extend(
            tool_namespaces or sorted({tool.split(".")[0] for tool in tools}))
        context.now.CopyFrom(now)
        request.message.version = "1"
        request.message.id = f"msg-{uuid.uuid4()}"
        request.message.sender.CopyFrom(owner_address)
        request.message.receiver.CopyFrom(agent_address)
        request.message.purpose = purpose
        request.message.trace_id = trace_id
        request.message.created_at.CopyFrom(now)
        json_format.ParseDict(message, request.message.payload)
        opened = self._envelope.OpenTurn(
            envelope_pb2.OpenTurnRequest(
                execution_request=request,
                runtime=envelope_pb2.RUNTIME_MCP if mcp else envelope_pb2.RUNTIME_DRIVER),
            metadata=self._conn.metadata, timeout=self._conn.timeout)
        if opened.HasField("result"):
            raise TurnRefused(_turn_end(opened.result, ""))
        return Turn(self, opened, request)

    def escalation(self, escalation_id: str) -> EscalationStatus:
        """An escalation of the host's scope, as the reviewer left it."""
        answer = self._grants.GetEscalation(
            grantstore_pb2.GetEscalationRequest(escalation_id=escalation_id),
            metadata=self._grant_conn.metadata, timeout=self._grant_conn.timeout)
        return _escalation_status(answer.escalation)


class Reviewer:
    """What a reviewer's credential does: decide the escalations addressed to it
    (``connection`` reaches the GrantStore)."""

    def __init__(self, connection: Connection) -> None:
        self._conn = connection
        self._grants = grantstore_pb2_grpc.GrantStoreStub(connection.channel)

    def approve(self, escalation_id: str, *, note: str = "") -> EscalationStatus:
        """Approves: the grant store issues the requested authority as a grant."""
        return self._resolve(escalation_id, grantstore_pb2.ESCALATION_DECISION_APPROVE, note)

    def deny(self, escalation_id: str, *, note: str = "") -> EscalationStatus:
        return self._resolve(escalation_id, grantstore_pb2.ESCALATION_DECISION_DENY, note)

    def _resolve(self, escalation_id: str, decision: int, note: str) -> EscalationStatus:
        answer = self._grants.ResolveEscalation(
            grantstore_pb2.ResolveEscalationRequest(escalation_id=escalation_id,
                                                    decision=decision, note=note),
            metadata=self._conn.metadata, timeout=self._conn.timeout)
        return _escalation_status(answer.escalation)

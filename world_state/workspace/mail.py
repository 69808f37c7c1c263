"""Mail tools over the ``mail`` table: the inbox, drafts and sent items of the workspace owner
(``world.extra["owner_email"]``).

Addresses must look like ``name@domain.tld``; attachments name existing workspace files (the path
is the reference). Sent mail is stamped with the world clock; ids come from the seeded counter
``M``. Reading a message marks it read, so ``read_mail`` is a write.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Field

from servicegym.world_state.core import History, World
from servicegym.world_state.tools import ToolError, exists, rule, tool
from servicegym.world_state.workspace.files import FILE_SOURCES
from servicegym.world_state.workspace.world import Mail, WorkspaceWorld, check_email, new_id, normalize_path

Folder = Literal["inbox", "drafts", "sent"]
MAIL_SOURCES = ("list_mail", "search_mail")
DRAFT_SOURCES = ("create_draft", "list_mail", "search_mail", "reply_mail", "forward_mail")
MAX_RECIPIENTS = 50
MAX_ATTACHMENTS = 10


def _is_draft(world: World, history: History, args: dict[str, Any]) -> str | None:
    m = world.table("mail").get(args.get("draft_id"))
    if m is None:
        return f"draft {args.get('draft_id')!r} does not exist; list drafts with list_mail(folder='drafts')"
    if m.folder != "drafts":
        return f"message {m.id} is in {m.folder}, not drafts; only drafts can be changed or sent"
    return None


def _attachments_exist(world: World, history: History, args: dict[str, Any]) -> str | None:
    files = world.table("files")
    for a in args.get("attachments") or []:
        try:
            p = normalize_path(a)
        except ToolError as err:
            return f"attachment: {err}"
        if p not in files:
            return f"attachment {p!r} is not a workspace file; list_files shows the files"
    return None


DRAFT = rule("the draft must exist and be in drafts", _is_draft, DRAFT_SOURCES)
MESSAGE = exists("mail", "mail_id", "message", produced_by=MAIL_SOURCES)
ATTACHMENTS = rule("every attachment is an existing workspace file", _attachments_exist, FILE_SOURCES)


def owner_address(world: WorkspaceWorld) -> str:
    a = world.extra.get("owner_email")
    if not a:
        raise ToolError("this workspace has no owner address, so it cannot send mail")
    return a


def _addresses(values: list[str] | None, what: str) -> list[str]:
    out: list[str] = []
    for v in values or []:
        a = check_email(v, what)
        if a.casefold() not in {x.casefold() for x in out}:
            out.append(a)
    if len(out) > MAX_RECIPIENTS:
        raise ToolError(f"at most {MAX_RECIPIENTS} {what} addresses")
    return out


def _paths(values: list[str] | None) -> list[str]:
    out = list(dict.fromkeys(normalize_path(v) for v in values or []))
    if len(out) > MAX_ATTACHMENTS:
        raise ToolError(f"at most {MAX_ATTACHMENTS} attachments")
    return out


def summary(m: Mail) -> dict[str, Any]:
    return {"id": m.id, "folder": m.folder, "from": m.sender, "to": m.to, "subject": m.subject, "time": m.time,
            "read": m.read, "labels": m.labels, "attachments": m.attachments}


def full(m: Mail) -> dict[str, Any]:
    return {**summary(m), "cc": m.cc, "body": m.body, "in_reply_to": m.in_reply_to}


def _newest_first(rows: list[Mail]) -> list[Mail]:
    return sorted(rows, key=lambda m: (m.time, m.id), reverse=True)


@tool("read")
def list_mail(world: WorkspaceWorld, folder: Folder = "inbox", unread_only: bool = False, label: str | None = None,
              limit: Annotated[int, Field(ge=1, le=200)] = 20) -> dict[str, Any]:
    """List the messages of a mail folder, newest first (without bodies; read_mail shows one).

    Args:
        folder: inbox, drafts or sent
        unread_only: only unread messages
        label: only messages with this label
        limit: most messages returned (1-200)
    """
    rows = [m for m in world.table("mail") if m.folder == folder and (not unread_only or not m.read)
            and (label is None or label in m.labels)]
    unread = sum(1 for m in world.table("mail") if m.folder == folder and not m.read)
    return {"folder": folder, "total": len(rows), "unread": unread,
            "messages": [summary(m) for m in _newest_first(rows)[:limit]]}


@tool("write", pre=[MESSAGE])
def read_mail(world: WorkspaceWorld, mail_id: str) -> dict[str, Any]:
    """Read one message in full and mark it read.

    Args:
        mail_id: the message id from list_mail or search_mail
    """
    m = world.table("mail").require(mail_id)
    if not m.read:
        m = world.table("mail").update(m.id, read=True)
    return full(m)


@tool("read")
def search_mail(world: WorkspaceWorld, query: Annotated[str, Field(max_length=200)] = "", folder: Folder | None = None,
                sender: str | None = None, limit: Annotated[int, Field(ge=1, le=200)] = 20) -> dict[str, Any]:
    """Find messages whose subject, body or addresses hold every word of the query
    (case-insensitive), newest first.

    Args:
        query: words to look for ("" matches every message)
        folder: only this folder (default all)
        sender: only messages from an address or name containing this text
        limit: most messages returned (1-200)
    """
    words = query.casefold().split()
    who = sender.strip().casefold() if sender else ""
    hits = []
    for m in world.table("mail"):
        if folder is not None and m.folder != folder:
            continue
        if who and who not in m.sender.casefold():
            continue
        text = " ".join([m.subject, m.body, m.sender, *m.to, *m.cc]).casefold()
        if all(w in text for w in words):
            hits.append(m)
    return {"query": query, "total": len(hits), "messages": [summary(m) for m in _newest_first(hits)[:limit]]}


def _store(world: WorkspaceWorld, folder: str, to: list[str], subject: str, body: str, cc: list[str] | None,
           attachments: list[str] | None, in_reply_to: str = "") -> Mail:
    m = Mail(id=new_id(world, "mail", "M"), folder=folder, sender=owner_address(world), to=_addresses(to, "to"),
             cc=_addresses(cc, "cc"), subject=subject.strip(), body=body, time=world.clock.text(),
             read=True, attachments=_paths(attachments), in_reply_to=in_reply_to)
    if folder == "sent":
        _check_sendable(m)
    return world.table("mail").insert(m)


def _check_sendable(m: Mail) -> None:
    if not m.to:
        raise ToolError("the message has no recipient; give at least one address in to")
    if not m.subject:
        raise ToolError("the message has no subject")


Subject = Annotated[str, Field(max_length=300)]
Body = Annotated[str, Field(max_length=50_000)]


@tool("write", pre=[ATTACHMENTS])
def create_draft(world: WorkspaceWorld, to: list[str], subject: Subject, body: Body, cc: list[str] | None = None,
                 attachments: list[str] | None = None) -> dict[str, Any]:
    """Save a new draft in the drafts folder (send it later with send_draft).

    Args:
        to: recipient addresses (may be empty for now)
        subject: the subject line
        body: the message text
        cc: copy addresses
        attachments: workspace file paths to attach
    """
    return full(_store(world, "drafts", to, subject, body, cc, attachments))


@tool("write", pre=[DRAFT, ATTACHMENTS])
def update_draft(world: WorkspaceWorld, draft_id: str, to: list[str] | None = None, subject: Subject | None = None,
                 body: Body | None = None, cc: list[str] | None = None,
                 attachments: list[str] | None = None) -> dict[str, Any]:
    """Change the fields of a draft that are given; the others stay.

    Args:
        draft_id: the draft's id
        to: new recipient list
        subject: new subject
        body: new text
        cc: new copy list
        attachments: new attachment list (workspace paths)
    """
    changes: dict[str, Any] = {}
    if to is not None:
        changes["to"] = _addresses(to, "to")
    if cc is not None:
        changes["cc"] = _addresses(cc, "cc")
    if subject is not None:
        changes["subject"] = subject.strip()
    if body is not None:
        changes["body"] = body
    if attachments is not None:
        changes["attachments"] = _paths(attachments)
    if not changes:
        raise ToolError("nothing to change; give at least one of to, subject, body, cc, attachments")
    changes["time"] = world.clock.text()
    return full(world.table("mail").update(draft_id, **changes))


@tool("write", pre=[DRAFT])
def delete_draft(world: WorkspaceWorld, draft_id: str) -> dict[str, Any]:
    """Discard a draft.

    Args:
        draft_id: the draft's id
    """
    world.table("mail").delete(draft_id)
    return {"deleted": draft_id}


def _attachments_still_exist(world: WorkspaceWorld, m: Mail) -> None:
    gone = [a for a in m.attachments if a not in world.table("files")]
    if gone:
        raise ToolError(f"attachment {gone[0]!r} no longer exists; change the attachments with update_draft")


@tool("write", pre=[DRAFT])
def send_draft(world: WorkspaceWorld, draft_id: str) -> dict[str, Any]:
    """Send a draft now: it moves to sent, stamped with the current time.

    Args:
        draft_id: the draft's id
    """
    m = world.table("mail").require(draft_id)
    _check_sendable(m)
    _attachments_still_exist(world, m)
    return full(world.table("mail").update(m.id, folder="sent", time=world.clock.text(), sender=owner_address(world)))


@tool("write", pre=[ATTACHMENTS])
def send_mail(world: WorkspaceWorld, to: Annotated[list[str], Field(min_length=1)], subject: Subject, body: Body,
              cc: list[str] | None = None, attachments: list[str] | None = None) -> dict[str, Any]:
    """Send a new message at once (it is stored in sent).

    Args:
        to: recipient addresses (at least one)
        subject: the subject line
        body: the message text
        cc: copy addresses
        attachments: workspace file paths to attach
    """
    return full(_store(world, "sent", to, subject, body, cc, attachments))


def _prefixed(prefix: str, subject: str) -> str:
    s = subject.strip()
    return s if s.casefold().startswith(prefix.casefold()) else f"{prefix} {s}"


@tool("write", pre=[MESSAGE])
def reply_mail(world: WorkspaceWorld, mail_id: str, body: Body, reply_all: bool = False,
               as_draft: bool = False) -> dict[str, Any]:
    """Reply to a message (subject "Re: ..."), sent at once or saved as a draft.

    Args:
        mail_id: the message to answer
        body: the reply text
        reply_all: also address everyone else on the message
        as_draft: save the reply in drafts instead of sending it
    """
    m = world.table("mail").require(mail_id)
    if m.folder == "drafts":
        raise ToolError(f"message {m.id} is a draft; change it with update_draft or send it with send_draft")
    me = owner_address(world).casefold()
    if m.folder == "inbox":
        to = [m.sender]
        others = [a for a in [*m.to, *m.cc] if a.casefold() != me] if reply_all else []
    else:
        to = list(m.to)
        others = list(m.cc) if reply_all else []
    others = [a for a in others if a.casefold() not in {t.casefold() for t in to}]
    return full(_store(world, "drafts" if as_draft else "sent", to, _prefixed("Re:", m.subject), body, others, [],
                       in_reply_to=m.id))


@tool("write", pre=[MESSAGE])
def forward_mail(world: WorkspaceWorld, mail_id: str, to: Annotated[list[str], Field(min_length=1)], body: Body = "",
                 as_draft: bool = False) -> dict[str, Any]:
    """Forward a message with its attachments (subject "Fwd: ..."); the original follows your text.
    Attachments whose files were deleted since are left out and listed in dropped_attachments.

    Args:
        mail_id: the message to forward
        to: recipient addresses
        body: your text above the forwarded message
        as_draft: save in drafts instead of sending
    """
    m = world.table("mail").require(mail_id)
    files = world.table("files")
    kept = [a for a in m.attachments if a in files]
    quoted = (f"{body.rstrip()}\n\n" if body.strip() else "") + (
        f"---------- Forwarded message ----------\nFrom: {m.sender}\nDate: {m.time}\nSubject: {m.subject}\n"
        f"To: {', '.join(m.to)}\n\n{m.body}"
    )
    out = full(_store(world, "drafts" if as_draft else "sent", to, _prefixed("Fwd:", m.subject), quoted, [], kept))
    out["dropped_attachments"] = [a for a in m.attachments if a not in files]
    return out


Label = Annotated[str, Field(min_length=1, max_length=40)]


@tool("write", pre=[MESSAGE])
def label_mail(world: WorkspaceWorld, mail_id: str, add: list[Label] | None = None, remove: list[Label] | None = None,
               mark_unread: bool = False) -> dict[str, Any]:
    """Add or remove labels of a message, or mark it unread again.

    Args:
        mail_id: the message
        add: labels to add, e.g. ["follow-up"]
        remove: labels to remove
        mark_unread: mark the message unread
    """
    m = world.table("mail").require(mail_id)
    add = [a.strip() for a in add or [] if a.strip()]
    remove = [r.strip() for r in remove or []]
    missing = [r for r in remove if r not in m.labels and r not in add]
    if missing:
        raise ToolError(f"message {m.id} has no label {missing[0]!r}; its labels: {m.labels}")
    if not add and not remove and not mark_unread:
        raise ToolError("nothing to change; give add, remove or mark_unread")
    labels = [x for x in dict.fromkeys([*m.labels, *add]) if x not in remove]
    changes: dict[str, Any] = {"labels": labels}
    if mark_unread:
        changes["read"] = False
    return summary(world.table("mail").update(m.id, **changes))


MAIL_TOOLS = [list_mail, read_mail, search_mail, create_draft, update_draft, delete_draft, send_draft, send_mail,
              reply_mail, forward_mail, label_mail]

"""Contact tools over the ``contacts`` table: people with one address each, in named groups;
ids from the counter ``C``. Two contacts never share an address."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import Field

from servicegym.world_state.tools import ToolError, exists, tool
from servicegym.world_state.workspace.world import Contact, WorkspaceWorld, check_email, new_id

CONTACT_SOURCES = ("search_contacts", "list_contact_group", "add_contact")
CONTACT = exists("contacts", "contact_id", "contact", produced_by=CONTACT_SOURCES)
Name = Annotated[str, Field(min_length=1, max_length=120)]
Short = Annotated[str, Field(max_length=120)]
Group = Annotated[str, Field(min_length=1, max_length=40)]


def _groups(values: list[str] | None) -> list[str]:
    return list(dict.fromkeys(g.strip().casefold() for g in values or [] if g.strip()))


def _unique_email(world: WorkspaceWorld, email: str, skip: str = "") -> str:
    a = check_email(email, "email")
    for c in world.table("contacts"):
        if c.id != skip and c.email.casefold() == a.casefold():
            raise ToolError(f"{a} already belongs to contact {c.id} ({c.name}); change that one with update_contact")
    return a


def _sorted(rows: list[Contact]) -> list[dict[str, Any]]:
    return [c.model_dump(mode="json") for c in sorted(rows, key=lambda c: (c.name.casefold(), c.id))]


@tool("read")
def search_contacts(world: WorkspaceWorld, query: Annotated[str, Field(max_length=200)] = "",
                    limit: Annotated[int, Field(ge=1, le=200)] = 20) -> dict[str, Any]:
    """Find contacts whose name, address, role, organization or groups hold every word of the
    query (case-insensitive), sorted by name.

    Args:
        query: words to look for ("" lists every contact)
        limit: most contacts returned (1-200)
    """
    words = query.casefold().split()
    hits = [c for c in world.table("contacts")
            if all(w in " ".join([c.name, c.email, c.role, c.organization, *c.groups]).casefold() for w in words)]
    return {"query": query, "total": len(hits), "contacts": _sorted(hits)[:limit]}


@tool("read", pre=[CONTACT])
def get_contact(world: WorkspaceWorld, contact_id: str) -> dict[str, Any]:
    """One contact in full.

    Args:
        contact_id: the contact id
    """
    return world.table("contacts").require(contact_id).model_dump(mode="json")


@tool("write")
def add_contact(world: WorkspaceWorld, name: Name, email: str, role: Short = "", organization: Short = "",
                phone: Annotated[str, Field(max_length=40)] = "", groups: list[Group] | None = None) -> dict[str, Any]:
    """Add a contact (its address must not belong to another contact).

    Args:
        name: full name
        email: e-mail address
        role: job title or relation
        organization: company or institution
        phone: phone number
        groups: group names, e.g. ["team", "clients"]
    """
    c = Contact(id=new_id(world, "contacts", "C"), name=name.strip(), email=_unique_email(world, email),
                role=role.strip(), organization=organization.strip(), phone=phone.strip(), groups=_groups(groups))
    return world.table("contacts").insert(c).model_dump(mode="json")


@tool("write", pre=[CONTACT])
def update_contact(world: WorkspaceWorld, contact_id: str, name: Name | None = None, email: str | None = None,
                   role: Short | None = None, organization: Short | None = None,
                   phone: Annotated[str, Field(max_length=40)] | None = None, groups: list[Group] | None = None) -> dict[str, Any]:
    """Change the given fields of a contact (groups replace the old ones).

    Args:
        contact_id: the contact id
        name: new name
        email: new address
        role: new role
        organization: new organization
        phone: new phone number
        groups: new group list
    """
    changes: dict[str, Any] = {}
    if email is not None:
        changes["email"] = _unique_email(world, email, skip=contact_id)
    for key, value in (("name", name), ("role", role), ("organization", organization), ("phone", phone)):
        if value is not None:
            changes[key] = value.strip()
    if changes.get("name") == "":
        raise ToolError("name must not be blank")
    if groups is not None:
        changes["groups"] = _groups(groups)
    if not changes:
        raise ToolError("nothing to change; give at least one field")
    return world.table("contacts").update(contact_id, **changes).model_dump(mode="json")


@tool("read")
def list_contact_group(world: WorkspaceWorld, group: Group) -> dict[str, Any]:
    """The contacts in one group, sorted by name, and the names of all groups.

    Args:
        group: the group name (case-insensitive)
    """
    want = group.strip().casefold()
    members = [c for c in world.table("contacts") if want in c.groups]
    groups = sorted({g for c in world.table("contacts") for g in c.groups})
    if not members:
        raise ToolError(f"no contact is in group {group!r}; the groups are: {', '.join(groups) or 'none'}")
    return {"group": want, "total": len(members), "contacts": _sorted(members), "all_groups": groups}


CONTACT_TOOLS = [search_contacts, get_contact, add_contact, update_contact, list_contact_group]

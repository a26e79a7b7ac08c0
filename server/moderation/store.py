"""The moderators' SQL (issue 21 point 4): reports, sanctions and the audit log.

* ``chat_reports``: :meth:`ModerationStore.file` (a player's report, with the talk around
  the message; at most ``chat_reports_per_hour`` per player), :meth:`~ModerationStore.reports`,
  :meth:`~ModerationStore.resolve`.
* ``sanctions``: :meth:`~ModerationStore.sanction` (a silence, a player's ban, an
  address's ban), :meth:`~ModerationStore.lift`, :meth:`~ModerationStore.active` (what every
  process's :class:`server.moderation.sanctions.Sanctions` reads every few seconds).
* ``moderation_log``: every moderator action is written in the same transaction as the
  action itself (:meth:`~ModerationStore.log` for actions that change no SQL row, such as
  hiding a message in a live room), and read back by :meth:`~ModerationStore.audit`.

Every method may raise what SQLAlchemy and the driver raise when the database cannot be
reached; the HTTP routes answer ``503 database_unavailable``.
"""

from __future__ import annotations

import ipaddress
import json
import secrets
import time
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import and_, func, or_, select, update

from ..database import Database
from ..database.schema import chat_reports, moderation_log, players, sanctions

KINDS = ("silence", "ban_player", "ban_address")
"""What a sanction does: silence a player's chat everywhere, keep a player out, keep an
address (or a network) out."""

REPORT_WINDOW_SECONDS = 3600.0
"""The window of ``chat_reports_per_hour``."""


class ReportLimited(Exception):
    """A player filed ``chat_reports_per_hour`` reports in the last hour.

    Attributes:
        retry_after: seconds until one more report is taken.
    """

    def __init__(self, retry_after: float) -> None:
        super().__init__(f"too many reports; wait {retry_after:.0f} s")
        self.retry_after = retry_after


class ModerationError(Exception):
    """A moderator request that cannot be done; nothing changed.

    Attributes:
        status: the HTTP status (400, 404).
        code: ``bad_sanction``, ``report_not_found``, ``sanction_not_found``.
    """

    def __init__(self, status: int, code: str, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.code = code
        self.message = message


def _iso(at: datetime | None) -> str | None:
    if at is None:
        return None
    if at.tzinfo is None:
        at = at.replace(tzinfo=UTC)
    return at.isoformat()


def _ts(at: datetime | None) -> float | None:
    if at is None:
        return None
    if at.tzinfo is None:
        at = at.replace(tzinfo=UTC)
    return at.timestamp()


def seconds_of(text: str | None) -> float | None:
    """Unix seconds of an ISO 8601 time as the store gives it (None stays None)."""
    if text is None:
        return None
    return _ts(datetime.fromisoformat(text))


WIDEST_PREFIX = {4: 16, 6: 32}
"""The widest network a ban may name: an IPv4 /16, an IPv6 /32 (a typo must not ban a
continent, nor 0.0.0.0/0 the whole site)."""


def normal_address(text: str) -> str:
    """An address or a network as a ban keeps it: ``203.0.113.7``, ``203.0.113.0/24``,
    ``2001:db8::/48``; an IPv4-mapped IPv6 address as its IPv4 address (as the limits count
    it).

    Raises:
        ModerationError: 400 ``bad_sanction`` when it is neither, when a network has host
            bits set (``203.0.113.7/8``: a typo?), or is wider than :data:`WIDEST_PREFIX`.
    """
    try:
        if "/" in text:
            net = ipaddress.ip_network(text, strict=True)
        else:
            ip = ipaddress.ip_address(text)
            if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
                ip = ip.ipv4_mapped
            return str(ip)
    except ValueError as exc:
        raise ModerationError(400, "bad_sanction", f"{text!r} is not an IP address or a "
                              f"network (CIDR) with its host bits clear: {exc}") from None
    if net.prefixlen < WIDEST_PREFIX[net.version]:
        raise ModerationError(400, "bad_sanction", f"{text!r} is wider than a ban may be "
                              f"(at most a /{WIDEST_PREFIX[net.version]})")
    return str(net)


class ModerationStore:
    """Reports, sanctions and the audit log of one database (migrated on first use).

    Args:
        db: the database.
        reports_per_hour: the most reports one player may file in an hour (0: no limit).
        clock: Unix seconds.
    """

    def __init__(self, db: Database, reports_per_hour: int = 10,
                 clock: Any = time.time) -> None:
        self.db = db
        self.reports_per_hour = reports_per_hour
        self._clock = clock

    async def _ready(self) -> None:
        if not self.db.migrated:
            await self.db.migrate()

    def _now(self) -> datetime:
        return datetime.fromtimestamp(self._clock(), UTC)

    # -- reports ---------------------------------------------------------------------------
    async def file(self, reporter: str, room: str, entry: dict[str, Any],
                   context: list[dict[str, Any]], reason: str, note: str | None) -> str:
        """File ``reporter``'s report of a message (``entry``, as the room keeps it, with its
        author's player id in ``by``) and the messages around it (``context``).

        A second report of the same message by the same player files nothing and returns
        the first one's id.

        Returns:
            The report's id (16 hex digits).

        Raises:
            ReportLimited: ``reporter`` filed ``reports_per_hour`` in the last hour.
        """
        await self._ready()
        now = self._now()
        message_id = int(entry.get("id", 0))
        async with self.db.begin() as conn:
            same = (await conn.execute(select(chat_reports.c.id).where(
                chat_reports.c.reporter_id == reporter, chat_reports.c.room_id == room,
                chat_reports.c.message_id == message_id))).first()
            if same is not None:
                return str(same[0])
            if self.reports_per_hour:
                since = datetime.fromtimestamp(now.timestamp() - REPORT_WINDOW_SECONDS, UTC)
                recent = (await conn.execute(
                    select(chat_reports.c.created_at)
                    .where(chat_reports.c.reporter_id == reporter,
                           chat_reports.c.created_at > since)
                    .order_by(chat_reports.c.created_at))).scalars().all()
                if len(recent) >= self.reports_per_hour:
                    oldest = _ts(recent[len(recent) - self.reports_per_hour]) or now.timestamp()
                    raise ReportLimited(max(1.0, oldest + REPORT_WINDOW_SECONDS
                                            - now.timestamp()))
            report_id = secrets.token_hex(8)
            await conn.execute(chat_reports.insert().values(
                id=report_id, created_at=now, reporter_id=reporter, room_id=room,
                message_id=message_id, author_id=entry.get("by"),
                message=json.dumps(entry, ensure_ascii=False),
                context=json.dumps(context, ensure_ascii=False), reason=reason, note=note,
                status="open"))
        return report_id

    @staticmethod
    def _report(row: Any) -> dict[str, Any]:
        return {
            "id": row.id, "at": _iso(row.created_at), "reporter": row.reporter_id,
            "room": row.room_id, "message_id": row.message_id, "author": row.author_id,
            "message": json.loads(row.message), "context": json.loads(row.context),
            "reason": row.reason, "note": row.note, "status": row.status,
            "resolved_at": _iso(row.resolved_at), "resolved_by": row.resolved_by,
            "resolution": row.resolution,
        }

    async def reports(self, status: str | None = "open", limit: int = 50) -> list[dict]:
        """Reports, oldest first (``status`` ``open`` or ``resolved``; None: both), at most
        ``limit``: ``[{"id", "at", "reporter", "room", "message_id", "author", "message",
        "context", "reason", "note", "status", "resolved_at", "resolved_by",
        "resolution"}]``."""
        await self._ready()
        query = select(chat_reports).order_by(chat_reports.c.created_at, chat_reports.c.id)
        if status is not None:
            query = query.where(chat_reports.c.status == status)
        async with self.db.connect() as conn:
            rows = (await conn.execute(query.limit(limit))).all()
        return [self._report(r) for r in rows]

    async def report(self, report_id: str) -> dict[str, Any]:
        """One report (the shape of :meth:`reports`).

        Raises:
            ModerationError: 404 ``report_not_found``.
        """
        await self._ready()
        async with self.db.connect() as conn:
            row = (await conn.execute(select(chat_reports).where(
                chat_reports.c.id == report_id))).first()
        if row is None:
            raise ModerationError(404, "report_not_found", "no such report")
        return self._report(row)

    async def resolve(self, report_id: str, moderator: str,
                      resolution: str | None) -> dict[str, Any]:
        """Mark a report resolved (again: its resolution is replaced), logged.

        Raises:
            ModerationError: 404 ``report_not_found``.
        """
        await self._ready()
        now = self._now()
        async with self.db.begin() as conn:
            done = await conn.execute(update(chat_reports).where(
                chat_reports.c.id == report_id).values(
                status="resolved", resolved_at=now, resolved_by=moderator,
                resolution=resolution))
            if not done.rowcount:
                raise ModerationError(404, "report_not_found", "no such report")
            await self._log(conn, now, moderator, "resolve", report_id,
                            {"resolution": resolution})
        return await self.report(report_id)

    # -- sanctions -------------------------------------------------------------------------
    @staticmethod
    def _sanction(row: Any) -> dict[str, Any]:
        return {"id": row.id, "kind": row.kind, "target": row.target,
                "at": _iso(row.created_at), "until": _iso(row.until), "reason": row.reason,
                "moderator": row.moderator, "lifted_at": _iso(row.lifted_at)}

    async def sanction(self, kind: str, target: str, seconds: float | None,
                       reason: str | None, moderator: str) -> dict[str, Any]:
        """Add a sanction (``kind`` of :data:`KINDS`) for ``seconds`` (None: until lifted),
        logged in the same transaction.

        Returns:
            ``{"id", "kind", "target", "at", "until", "reason", "moderator", "lifted_at"}``.

        Raises:
            ModerationError: 400 ``bad_sanction`` (an unknown kind, a bad address), 404
                ``player_not_found`` (a silence or a player's ban of no such player).
        """
        if kind not in KINDS:
            raise ModerationError(400, "bad_sanction", f"kind is one of {', '.join(KINDS)}")
        await self._ready()
        if kind == "ban_address":
            target = normal_address(target)
        else:
            async with self.db.connect() as conn:
                row = (await conn.execute(select(players.c.deleted_at).where(
                    players.c.id == target))).first()
            if row is None or row[0] is not None:
                raise ModerationError(404, "player_not_found", "no such player")
        now = self._now()
        until = None if seconds is None else datetime.fromtimestamp(
            now.timestamp() + float(seconds), UTC)
        async with self.db.begin() as conn:
            done = await conn.execute(sanctions.insert().values(
                kind=kind, target=target, created_at=now, until=until, reason=reason,
                moderator=moderator))
            sanction_id = int(done.inserted_primary_key[0])
            await self._log(conn, now, moderator, "silence" if kind == "silence" else "ban",
                            target, {"sanction": sanction_id, "kind": kind,
                                     "seconds": seconds, "reason": reason})
            row = (await conn.execute(select(sanctions).where(
                sanctions.c.id == sanction_id))).one()
        return self._sanction(row)

    async def lift(self, sanction_id: int, moderator: str) -> dict[str, Any]:
        """Lift a sanction now (lifting it again changes nothing but is logged).

        Raises:
            ModerationError: 404 ``sanction_not_found``.
        """
        await self._ready()
        now = self._now()
        async with self.db.begin() as conn:
            row = (await conn.execute(select(sanctions).where(
                sanctions.c.id == sanction_id))).first()
            if row is None:
                raise ModerationError(404, "sanction_not_found", "no such sanction")
            if row.lifted_at is None:
                await conn.execute(update(sanctions).where(
                    sanctions.c.id == sanction_id).values(lifted_at=now))
            await self._log(conn, now, moderator,
                            "unsilence" if row.kind == "silence" else "unban", row.target,
                            {"sanction": sanction_id, "kind": row.kind})
            row = (await conn.execute(select(sanctions).where(
                sanctions.c.id == sanction_id))).one()
        return self._sanction(row)

    async def lift_all(self, kind: str, target: str, moderator: str) -> int:
        """Lift every active sanction of ``kind`` on ``target`` (logged once).

        Returns:
            How many were lifted.
        """
        await self._ready()
        now = self._now()
        async with self.db.begin() as conn:
            done = await conn.execute(update(sanctions).where(
                sanctions.c.kind == kind, sanctions.c.target == target,
                sanctions.c.lifted_at.is_(None),
                or_(sanctions.c.until.is_(None), sanctions.c.until > now)).values(
                lifted_at=now))
            await self._log(conn, now, moderator,
                            "unsilence" if kind == "silence" else "unban", target,
                            {"kind": kind, "lifted": done.rowcount})
        return int(done.rowcount or 0)

    async def active(self, kind: str | None = None) -> list[dict[str, Any]]:
        """The sanctions in force now (not lifted, not run out), oldest first."""
        await self._ready()
        now = self._now()
        query = (select(sanctions)
                 .where(and_(sanctions.c.lifted_at.is_(None),
                             or_(sanctions.c.until.is_(None), sanctions.c.until > now)))
                 .order_by(sanctions.c.id))
        if kind is not None:
            query = query.where(sanctions.c.kind == kind)
        async with self.db.connect() as conn:
            rows = (await conn.execute(query)).all()
        return [self._sanction(r) for r in rows]

    # -- the audit log ---------------------------------------------------------------------
    @staticmethod
    async def _log(conn: Any, at: datetime, moderator: str, action: str, target: str,
                   detail: dict[str, Any]) -> None:
        await conn.execute(moderation_log.insert().values(
            at=at, moderator=moderator, action=action, target=target[:128],
            detail=json.dumps(detail, ensure_ascii=False)))

    async def log(self, moderator: str, action: str, target: str,
                  detail: dict[str, Any]) -> None:
        """Write one moderator action to the audit log (``hide``, ``close_room``: actions
        whose change is in the room store, not in SQL)."""
        await self._ready()
        async with self.db.begin() as conn:
            await self._log(conn, self._now(), moderator, action, target, detail)

    async def audit(self, limit: int = 100, before: int | None = None) -> list[dict]:
        """The audit log, newest first: ``[{"id", "at", "moderator", "action", "target",
        "detail"}]``, at most ``limit``, with ids below ``before`` when given (paging)."""
        await self._ready()
        query = select(moderation_log).order_by(moderation_log.c.id.desc()).limit(limit)
        if before is not None:
            query = query.where(moderation_log.c.id < before)
        async with self.db.connect() as conn:
            rows = (await conn.execute(query)).all()
        return [{"id": r.id, "at": _iso(r.at), "moderator": r.moderator, "action": r.action,
                 "target": r.target, "detail": json.loads(r.detail)} for r in rows]

    async def count_open(self) -> int:
        """How many reports wait for a moderator (for ``/metrics``)."""
        await self._ready()
        async with self.db.connect() as conn:
            return int((await conn.execute(select(func.count()).select_from(
                chat_reports).where(chat_reports.c.status == "open"))).scalar() or 0)

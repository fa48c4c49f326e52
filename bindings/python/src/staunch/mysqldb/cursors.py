"""``MySQLdb.cursors``: mysqlclient's cursor classes over staunch's."""

from __future__ import annotations

from .. import _core


class _Converting:
    """mysqlclient's cursor behaviour on staunch's: applies the connection's
    ``conv`` entries that differ from staunch's own conversions (see
    converters), keeps the statement as sent in ``_executed`` as bytes
    (Django's last_executed_query decodes it) and returns fetchmany/fetchall
    as tuples."""

    @property
    def _executed(self):
        # mysqlclient's: the statement as sent (parameters written in as
        # literals), encoded as the connection's (utf8mb4) text; None before
        # the first.
        s = super()._executed
        return s.encode("utf-8", "replace") if isinstance(s, str) else s

    @_executed.setter
    def _executed(self, value) -> None:
        _core.Cursor._executed.fset(self, value)

    def execute(self, query, args=None):
        if args is not None and "_binary %s" in query:
            # Django marks bytes parameters `_binary %s` (mysqlclient writes
            # them as plain quoted strings); staunch writes bytes as binary
            # literals itself, and a second introducer is a syntax error.
            query = query.replace("_binary %s", "%s")
        return super().execute(query, args)

    # mysqlclient returns tuples (Django's MySQL backend stops reading at
    # an empty tuple: its empty_fetchmany_value).
    def fetchmany(self, size=None):
        return tuple(super().fetchmany(size))

    def fetchall(self):
        return tuple(super().fetchall())

    def _start_set(self, batch=None) -> None:
        super()._start_set(batch)
        conv = self.connection._column_conv
        if not conv or not self._types or not self._data:
            return
        fns = [conv.get(d[1]) for d in self.description]
        if not any(fns):
            return
        from .converters import _as_text

        if isinstance(self._data[0], dict):
            names = [d[0] for d in self.description]
            self._data = [
                {k: (v if f is None or v is None else f(_as_text(v))) for k, f, v in zip(names, fns, row.values())}
                for row in self._data
            ]
        else:
            self._data = [
                tuple(v if f is None or v is None else f(_as_text(v)) for f, v in zip(fns, row)) for row in self._data
            ]


class Cursor(_Converting, _core.Cursor):
    """The buffered cursor (mysqlclient's default)."""


class SSCursor(_Converting, _core.SSCursor):
    """A streaming cursor (``conv`` entries are not applied to streamed rows)."""


class DictCursor(_Converting, _core.DictCursor):
    """Rows as dicts."""


BaseCursor = _core.Cursor

"""The multiplayer server: starlette app, WebSocket sessions, room service, stores, broker
and deadline sweeper. See ``server.app.create_app`` and ``docs/protocol.md``."""

#!/bin/sh
# The PostgreSQL image's HEALTHCHECK: the server accepts connections on 127.0.0.1:5432
# (pg_isready; it needs no password: an answer refusing the login still means the server is up).
exec /usr/lib/postgresql/15/bin/pg_isready --host=127.0.0.1 --port=5432 --dbname=sharedos \
  --username=sharedos --timeout=5 --quiet

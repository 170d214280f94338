// The system's SQLite for DepotOffline: part of every Apple platform, `libsqlite3-dev` on Linux
// (bash scripts/test installs it where the header is missing).
#include <sqlite3.h>

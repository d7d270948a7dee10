/* server.c: written in this change */

/* conn.c: written in this change */

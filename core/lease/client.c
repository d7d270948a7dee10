/* client.c: written in this change */

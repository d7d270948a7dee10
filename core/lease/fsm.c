/* fsm.c: written in this change */

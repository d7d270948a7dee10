/*
 * librdlm_pmpi.so's barrier: which of rdlm's and MPI's runs, per communicator
 * (RDLM_PMPI_BARRIER; choose.c).
 */
#ifndef RDLM_PMPI_CHOOSE_H
#define RDLM_PMPI_CHOOSE_H

#include <mpi.h>

/** MPI_Barrier(comm) as librdlm_pmpi.so runs it: rdlm_mpi_barrier or PMPI_Barrier,
 *  as RDLM_PMPI_BARRIER and, with auto, the first barrier on comm decided (that one
 *  is collective over comm as every barrier is, and runs about a hundred barriers
 *  to time both). An intercommunicator, a communicator of one process and
 *  MPI_COMM_NULL go to PMPI_Barrier; so does every barrier after the rdlm one
 *  failed (logged once). Returns what PMPI_Barrier would. */
int rdlm_pmpi_barrier(MPI_Comm comm);

#endif

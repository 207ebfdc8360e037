#!/usr/bin/env bash
# A stand-in for `ampx` that knows --data-parallel, for data_parallel.py
# compare's test: rank 0 prints three epoch records with the
# `data_parallel` fields (the wire bytes from --allreduce-dtype), the other
# ranks nothing, as ampx train does under mpirun.
if [[ "$*" == *"--help"* ]]; then
  echo "  --data-parallel   train on every rank of the MPI job"
  exit 0
fi
[ "${OMPI_COMM_WORLD_RANK:-0}" = 0 ] || exit 0
dp=""
if [[ "$*" == *"--data-parallel"* ]]; then
  dtype=$(sed -E 's/.*--allreduce-dtype ([a-z0-9]+).*/\1/' <<<"$*")
  bytes=$([ "$dtype" = f32 ] && echo 64 || echo 32)
  ranks=${OMPI_COMM_WORLD_SIZE:-1}
  dp=",\"data_parallel\":{\"ranks\":$ranks,\"global_batch\":32,\"buckets\":1,"
  dp+="\"allreduce_dtype\":\"$dtype\",\"wire_bytes_per_step\":$bytes,\"comm_ms_per_step\":2.0,"
  dp+="\"exposed_comm_ms_per_step\":0.5,\"overlap\":0.75}"
fi
for e in 1 2 3; do
  echo "{\"event\":\"epoch\",\"epoch\":$e,\"step_times_ms\":[1.0,2.0,4.0]$dp}"
done
echo '{"event":"done"}'

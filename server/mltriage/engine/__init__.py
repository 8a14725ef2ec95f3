"""The diagnosis engine: a log in, a ``Diagnosis`` out. The stages, in the order a log meets them:

1. ``reader``      — inputs (file, rank-log directory, stdin) in bounded blocks, decompressed
                     (``compressed``) and decoded region by region (``regions``: UTF-8/16/32, NUL
                     runs dropped); ``prefixes`` strips launcher/timestamp prefixes; ``errorfile``
                     turns torchrun error files into text.
2. ``scanner``     — the line loop: one pre-filter (``prefilter``, its phrases budgeted by
                     ``prefilter_budget``) over every block, Python tracebacks followed line by line
                     (``tracebacks``), torchrun's failure summary read (``torchrun_reader``,
                     ``launcher``), what the run shows as a whole recorded (``run_facts``), signatures
                     matched on the lines it lands on (``matcher``) and their ``hits`` kept, folded
                     or counted by the ``hit_store`` (``rank_groups``: one failure on many ranks).
3. ``findings``    — hits merged into findings, tied to their tracebacks, ranked.
4. ``run_reasoning`` — what no single line says: stalls, tracebacks the run survived, a rank that
                     left early, derived findings; ``interpret`` narrows fixes by captured numbers.
5. ``triage``      — the one owner of the verdict: the initiating rank, each rank's role, the root
                     cause and what is a consequence of it (with ``flight_recorder`` dumps).
``attach`` joins pasted topology and the local P2P probe to P2P-related findings; ``diagnose`` is
the front door that runs the stages.
"""

from mltriage.engine.reader import InputError

__all__ = ["diagnose_bytes", "diagnose_path", "diagnose_stream", "diagnose_streams", "diagnose_text", "InputError"]
_FRONT_DOOR = frozenset(__all__) - {"InputError"}


def __getattr__(name: str):
    # The front door is imported on first use: importing one stage's module (mltriage.engine.run_facts
    # from the run model, say) then does not import every stage, which made import cycles.
    if name in _FRONT_DOOR:
        from mltriage.engine import diagnose

        return getattr(diagnose, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

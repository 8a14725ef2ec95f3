def parse_pasted_matrices(text): return None
class PastedTopology: pass

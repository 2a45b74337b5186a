"""The operator's queues: the review inbox (held writes decided), link repair and its
suggestions, lint, and health (one summary naming the queue that fixes each problem).

The top of the engine: it may import every other engine package; none imports it.
"""

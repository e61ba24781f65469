"""Replaying a capture: the stages of a turn, the pipeline that runs them, executions supplied after
the fact, the conversion to an envelope and the redaction every output goes through.
"""

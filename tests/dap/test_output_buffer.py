"""The debuggee output buffer: whole lines per stream, bounded, read once for stop reports."""

from __future__ import annotations

from jupyter_agent_tools.dap.session import OutputBuffer


def test_streams_do_not_split_each_others_lines():
    buffer = OutputBuffer(max_chars=1000)
    for stream, text in [("stdout", "total"), ("stderr", "to stderr\n"), ("stdout", " 3\n")]:
        buffer.append(stream, text)
    assert buffer.text() == "to stderr\ntotal 3\n"


def test_partial_lines_show_when_read_and_new_output_is_read_once():
    buffer = OutputBuffer(max_chars=1000)
    buffer.append("stdout", "prompt> ")
    assert buffer.take_new() == "prompt> "
    assert buffer.take_new() == ""
    buffer.append("stdout", "answer\n")
    assert buffer.take_new() == "answer\n"
    assert buffer.text() == "prompt> answer\n"


def test_the_oldest_output_is_dropped_past_the_bound():
    buffer = OutputBuffer(max_chars=10)
    buffer.append("stdout", "0123456789\n")
    buffer.append("stdout", "abc\n")
    assert buffer.text() == "56789\nabc\n"
    assert buffer.dropped == 5 and len(buffer.text()) == 10

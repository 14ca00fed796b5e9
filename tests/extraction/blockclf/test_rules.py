"""The rules after the block model (extraction.blockclf.rules): comment threads, blocks inside and like
siblings of kept ones, the main region, the declared article body, the link tail; each alone and in
``classify``."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace

import numpy as np
import pytest

from extraction.blockclf import classifier, rules
from extraction.blockclf.classifier import classify
from extraction.dom.blocks import Block, page_blocks
from extraction.dom.html import parse_html
from tests.extraction.blockclf.pages import COMMENTS, page_with_comments

# An article's body: two paragraphs in their own container.
_STORY = ("<div class='story'><p>The bridge, built in 1931, carries twelve thousand cars a day. Engineers found "
          "cracks in two of its piers in the spring, and the council asked for a full survey.</p><p>Traffic will "
          "go by the ring road while the work lasts, the mayor said.</p></div>")


def _dropped_by(rule: Callable[[Sequence[Block], Sequence[bool]], list[int]], html_text: str) -> list[Block]:
    """Return the blocks ``rule`` drops from the page when every block is kept, in document order."""
    blocks = page_blocks(parse_html(html_text))
    return [blocks[i] for i in rule(blocks, [True] * len(blocks))]


def _dropped_texts(rule: Callable[[Sequence[Block], Sequence[bool]], list[int]], html_text: str) -> list[str]:
    """Return the texts of the blocks ``rule`` drops (``_dropped_by``)."""
    return [block.text for block in _dropped_by(rule, html_text)]


def _in_threads(page: str) -> str:
    """Return the text of the page's blocks that ``comment_blocks`` finds in readers' threads."""
    blocks = page_blocks(parse_html(page))
    return "\n".join(blocks[i].text for i in rules.comment_blocks(blocks))


def _post_and_thread(post_class: str, thread: str) -> str:
    """Return a page: a menu, a short post in a ``<div>`` of ``post_class``, then ``thread``."""
    return ("<html><body><div id='nav'><a href='/'>Home</a></div>"
            f"<div class='{post_class}'><h2>At the market</h2>"
            "<p>The stalls opened at dawn and the first buyers came for the river fish.</p></div>"
            f"{thread}</body></html>")


def test_comment_thread_after_an_article_is_dropped() -> None:
    root = parse_html(page_with_comments())
    blocks = page_blocks(root)
    found = "\n".join(blocks[i].text for i in rules.comment_blocks(blocks))
    assert all(comment in found for comment in COMMENTS) and "forty teachers" not in found
    article = classify(root, blocks=blocks, page_probabilities=[0.9, 0.05, 0.05])
    assert "forty teachers" in article.text and not any(text in article.text for text in COMMENTS)
    # Whatever the page type: articles with long threads are often typed list or other (issue 17).
    other = classify(root, blocks=blocks, page_probabilities=[0.1, 0.1, 0.8])
    assert not any(text in other.text for text in COMMENTS)


def test_a_thread_in_one_block_longer_than_the_article_is_still_a_thread() -> None:
    # WordPress: every comment an <li class="comment"> of one <ol>, so the whole thread is one block.
    items = "".join(f"<li class='comment c{i}'><div class='comment-author'>reader{i}</div><p>{text}</p></li>"
                    for i, text in enumerate(COMMENTS * 4))
    page = ("<html><body><div id='nav'><a href='/'>Home</a></div><div id='post'><h2>At the market</h2>"
            "<div class='entry'><p>The stalls opened at dawn and the first buyers came for the river fish.</p>"
            f"</div></div><div id='comments'><ol>{items}</ol></div></body></html>")
    found = _in_threads(page)
    assert all(comment in found for comment in COMMENTS) and "river fish" not in found
    # The same thread without comment-named items is, by length, the main block: left to the model.
    plain = page.replace("class='comment c", "class='note c").replace("comment-author", "note-author")
    plain_blocks = page_blocks(parse_html(plain))
    assert rules.comment_blocks(plain_blocks) == []


def test_a_comment_longer_than_the_article_does_not_make_its_thread_the_article() -> None:
    # Each comment its own block (<dd class="comment">'s body in a <div>), one of them three times the short
    # article: the longest block is one comment among comment-named siblings, so the article is the main block.
    long_comment = " ".join(COMMENTS * 3)
    items = "".join(f"<dt id='comment-{i}' class='comment'>reader{i}</dt><dd class='comment depth-1'>"
                    f"<div class='format_text'><p>{text}</p></div></dd>"
                    for i, text in enumerate((long_comment, *COMMENTS)))
    page = ("<html><body><div id='nav'><a href='/'>Home</a></div><div id='post'><h2>At the market</h2>"
            "<div class='entry'><p>The stalls opened at dawn and the first buyers came for the river fish.</p>"
            f"</div></div><div id='comments'><dl id='comment_list'>{items}</dl></div></body></html>")
    found = _in_threads(page)
    assert long_comment in found and all(comment in found for comment in COMMENTS) and "river fish" not in found
    # Items not named as single comments (only their ids, on other elements; or named after a state of the
    # comments, "has-comments"): by length, the longest block is then the main one, left to the model.
    for changed in (page.replace("class='comment depth-1'", "class='note'").replace("class='comment'", ""),
                    page.replace("class='comment", "class='has-comments").replace("id='comment-", "id='note-")):
        assert long_comment not in _in_threads(changed)


def test_a_lone_comment_longer_than_the_article_is_not_the_article() -> None:
    # WordPress (Dragnet R876): a thread of one <li class="comment"> in <ol class="commentlist">, its text twice the
    # short post's: the comment is in a thread, the post is the main block.
    long_comment = " ".join(COMMENTS * 2)
    thread = ("<div id='comments'><ol class='commentlist'><li class='comment even depth-1'><div class='comment-text'>"
              f"<p>{long_comment}</p></div></li></ol></div>")
    page = _post_and_thread("entry", thread)
    assert long_comment in _in_threads(page) and "river fish" not in _in_threads(page)
    # Not a single comment: an item outside a thread-named container, or a thread's own list alone in one.
    assert _in_threads(page.replace("<div id='comments'><ol class='commentlist'>", "<div><ol>")) == ""
    assert long_comment not in _in_threads(page.replace("<li class='comment even depth-1'>", "<li class='note'>"))


def test_a_long_comment_in_a_flat_thread_of_comment_bodies_is_not_the_article() -> None:
    # Movable Type (Dragnet R756): a head and a body per comment, all siblings, the body named
    # "comments-body"; one comment three times the short post.
    long_comment = " ".join(COMMENTS * 3)
    items = "".join(f"<div class='comments-body'><p>{text}</p></div><div class='comments-post'>reader{i}</div>"
                    for i, text in enumerate((long_comment, *COMMENTS)))
    page = _post_and_thread("blogbody", f"<div id='thread'>{items}</div>")
    found = _in_threads(page)
    assert long_comment in found and all(comment in found for comment in COMMENTS) and "river fish" not in found
    # A body named after the comments' state is not one comment: the longest block is then the main one.
    assert long_comment not in _in_threads(page.replace("comments-body", "has-comments"))


def test_a_thread_headed_comments_is_a_thread_whatever_its_items_markup() -> None:
    # Dragnet T13: <div id="comments"><h2>Comments</h2><dl> of plain <dt>/<dd>, longer than the post.
    items = "".join(f"<dt><a href='#c{i}'>{i}.</a> reader{i}</dt><dd><p>{text}</p></dd>"
                    for i, text in enumerate(COMMENTS * 4))
    def page(heading: str) -> str:
        return _post_and_thread("post", f"<div id='comments'><h2>{heading}</h2><dl>{items}</dl></div>")

    for heading in ("Comments", "12 Responses to At the market", "Leave a Reply", "网友评论"):
        found = _in_threads(page(heading))
        assert all(comment in found for comment in COMMENTS) and "river fish" not in found, heading
    # Under another heading the container's name alone does not make the longest block a thread.
    assert _in_threads(page("Our readers' market stories")) == ""


def test_a_forum_topic_keeps_its_posts() -> None:
    # Invision Community (WCXB-dev 0544): the page is the thread, every post an <article id="elComment_N"> in
    # <div id="comments">, each post's text in "comment-N_wrap"; nothing outside holds half the longest post.
    posts = "".join(f"<article id='elComment_{i}' class='ipsEntry'><div class='author'>reader{i}</div>"
                    f"<div id='comment-{i}_wrap' class='ipsEntry__content'><p>{text}</p></div></article>"
                    for i, text in enumerate((" ".join(COMMENTS), *COMMENTS)))
    page = ("<html><body><div id='nav'><a href='/'>Home</a></div><div class='cTopic' id='comments'>"
            f"<div class='ipsEntries'>{posts}</div></div>"
            "<section class='featuredComments'><p>A featured reply from another topic.</p></section></body></html>")
    found = _in_threads(page)
    assert not any(comment in found for comment in COMMENTS)
    assert "A featured reply from another topic." in found  # another named box: still a thread apart
    # Vanilla (WCXB-dev 0559): the opening post in its own <div class="ItemDiscussion">, the replies in <li
    # class="ItemComment"> of <ul class="Comments"> beside it; both in the unnamed <main> are the thread's posts.
    opening = "The forum software will no longer be maintained as open source, the vendor wrote to its users."
    replies = "".join(f"<li class='Item ItemComment'><div class='Comment'><p>{text}</p></div></li>"
                      for text in (" ".join(COMMENTS), *COMMENTS))
    vanilla = ("<html><body class='Discussion'><div id='nav'><a href='/'>Home</a></div><main class='Content'>"
               f"<div class='MessageList Discussion'><div class='Item ItemDiscussion'><p>{opening}</p></div></div>"
               f"<div class='CommentsWrap'><ul class='MessageList Comments'>{replies}</ul></div></main>"
               "<div class='Panel'><div class='InThisDiscussion'><p>In this Discussion: reader0, reader1</p></div>"
               "</div></body></html>")
    assert _in_threads(vanilla) == "In this Discussion: reader0, reader1"
    # The same posts after an article that holds half the longest post: the article is the main block.
    article = page.replace("<div class='cTopic' id='comments'>", f"{_STORY}<div class='cTopic' id='comments'>")
    found = _in_threads(article)
    assert all(comment in found for comment in COMMENTS) and "built in 1931" not in found


def _flat_thread_page(heading: str) -> str:
    # Movable Type (Dragnet R187): the post's paragraphs, its "Posted by" line, the thread's heading and each
    # comment's <div> with its "Posted by:" line, all children of the post's own <div>.
    comments = "".join(f"<div id='c{i}'><p>{text}</p></div><p class='posted'>Posted by: reader{i} at 9:0{i} AM</p>"
                       for i, text in enumerate(COMMENTS))
    return ("<html><body><div id='nav'><a href='/'>Home</a></div><div class='content'><h3>At the market</h3>"
            "<p>The stalls opened at dawn and the first buyers came for the river fish, which the boats had brought "
            "in before the fog.</p><p class='posted'>Posted by laurie at 8:00 AM</p>"
            f"<h2 id='comments'>{heading}</h2>{comments}</div><div id='footer'>Contact us</div></body></html>")


def test_a_thread_laid_out_flat_after_its_heading_is_dropped() -> None:
    for heading in ("Comments", "2 Comments »", "Comments (2)", "2 Responses to “At the market”", "网友评论"):
        root = parse_html(_flat_thread_page(heading))
        blocks = page_blocks(root)
        dropped, lines = rules.flat_threads(root, blocks, [True] * len(blocks))
        gone = [blocks[i].text for i in dropped] + [blocks[i].paragraphs[j].text for i, j in lines]
        assert all(comment in gone for comment in COMMENTS), heading
        assert heading in gone and "Posted by: reader0 at 9:00 AM" in gone, heading
        left = [p.text for i, block in enumerate(blocks) if i not in dropped for j, p in enumerate(block.paragraphs)
                if (i, j) not in lines]
        assert any("river fish" in text for text in left) and "Posted by laurie at 8:00 AM" in left
        assert "Contact us" in left  # after the heading's parent: not the thread's
    # A line of the heading's text earlier in the post's own block (a link to the thread) is not the heading.
    linked = _flat_thread_page("Comments").replace("<h3>At the market</h3>",
                                                   "<h3>At the market</h3><a href='#comments'>Comments</a>")
    root = parse_html(linked)
    blocks = page_blocks(root)
    dropped, lines = rules.flat_threads(root, blocks, [True] * len(blocks))
    gone = [blocks[i].paragraphs[j].text for i, j in lines]
    assert gone[:2] == ["Comments", "Posted by: reader0 at 9:00 AM"] and not any("river fish" in t for t in gone)


def test_a_section_called_comment_or_a_thread_heading_before_any_text_is_no_flat_thread() -> None:
    # A bare "Comment" is an article's section (Dragnet R179: "Comment", "Briefing", "Access" in a list of tips).
    root = parse_html(_flat_thread_page("Comment"))
    blocks = page_blocks(root)
    assert rules.flat_threads(root, blocks, [True] * len(blocks)) == ([], [])
    # Nothing kept before the heading (under FLAT_THREAD_MIN_BEFORE characters): no article for it to follow.
    root = parse_html(_flat_thread_page("Comments"))
    blocks = page_blocks(root)
    kept = [not any("river fish" in p.text for p in block.paragraphs) for block in blocks]
    assert rules.flat_threads(root, blocks, kept) == ([], [])


def test_container_named_after_comments_around_the_article_is_not_a_thread() -> None:
    root = parse_html(page_with_comments("<div id='story' class='post has-comments'>"))
    blocks = page_blocks(root)
    found = "\n".join(blocks[i].text for i in rules.comment_blocks(blocks))
    assert all(comment in found for comment in COMMENTS)
    assert "forty teachers" not in found and "six-hour debate" not in found


def test_a_dropped_block_between_the_paragraphs_of_a_kept_one_is_kept() -> None:
    # An <ol> in the middle of an article's <div> (trafilatura-eval's achgut.com page): its own block.
    questions = ("<ol><li>Wie schwer ist die Krankheit?</li><li>Wer ist davon betroffen?</li>"
                 "<li>Hinterlässt sie Folgeschäden?</li></ol>")
    links = "<ul><li><a href='/a'>Weiterlesen: die Lage im Mai</a></li><li><a href='/b'>Alle Berichte</a></li></ul>"
    page = ("<html><body><div id='menu'><a href='/'>Home</a></div><div class='body'>Die Lage am Mittwoch."
            f"<br>Die Fragen sind diese:{questions}Und die Antworten folgen.{links}Das Ende.</div>"
            "<div class='after'><p>Ein Kasten nach dem Artikel.</p></div></body></html>")
    blocks = page_blocks(parse_html(page))
    by_tag = {str(b.element.tag): b.index for b in blocks}
    body = next(b.index for b in blocks if b.element.get("class") == "body")
    kept = [b.index == body for b in blocks]
    # The list of questions lies between the body's paragraphs; the link list too, but it is links; the
    # box after the article is not inside it.
    assert rules.nested_blocks(blocks, kept) == [by_tag["ol"]]
    # Inside the kept block after its last paragraph: a list closes the body (points, ingredients, references);
    # any other block there is not between paragraphs and stays out.
    def at_end(html_text: str) -> list[str]:
        end_blocks = page_blocks(parse_html(html_text.replace("Und die Antworten folgen.", "").replace(
            "Das Ende.", "")))
        end_body = next(b.index for b in end_blocks if b.element.get("class") == "body")
        return [str(end_blocks[i].element.tag) for i in rules.nested_blocks(
            end_blocks, [b.index == end_body for b in end_blocks])]

    assert at_end(page) == ["ol"]
    assert at_end(page.replace("<ol>", "<ul>").replace("</ol>", "</ul>")) == ["ul"]
    assert at_end(page.replace("<ol>", "<div>").replace("</ol>", "</div>").replace("<li>", "<p>").replace(
        "</li>", "</p>")) == []
    assert rules.nested_blocks(blocks, [False] * len(blocks)) == []
    # A short block between the paragraphs (a label, a share line) is under NESTED_MIN_CHARS: not kept.
    short = page.replace(questions, "<div class='share'>Teilen Sie dies mit:</div>")
    short_blocks = page_blocks(parse_html(short))
    short_body = next(b.index for b in short_blocks if b.element.get("class") == "body")
    assert any(b.element.get("class") == "share" for b in short_blocks)
    assert rules.nested_blocks(short_blocks, [b.index == short_body for b in short_blocks]) == []


def test_a_table_inside_a_kept_block_is_read_as_one_block() -> None:
    # A ranking in an article's body (wcxb-dev 0157): each cell is a block of a few characters, under
    # NESTED_MIN_CHARS alone; the table's cells together are kept.
    rows = "".join(f"<tr><td>{rank}</td><td>{state}</td><td>{score}</td></tr>" for rank, state, score in
                   ((1, "North Dakota", "82.0"), (2, "Vermont", "80.8"), (3, "Nebraska", "78.0"), (4, "Iowa", "69.3")))
    page = ("<html><body><div id='menu'><a href='/'>Home</a></div><div class='body'><p>The report ranks the states."
            f"</p><figure><table><tbody><tr><th>Rank</th><th>State</th><th>Score</th></tr>{rows}</tbody></table>"
            "</figure><p>North Dakota leads for the second year.</p></div></body></html>")
    blocks = page_blocks(parse_html(page))
    body = next(b.index for b in blocks if b.element.get("class") == "body")
    kept = [b.index == body for b in blocks]
    cells = [b.index for b in blocks if b.element.tag in ("td", "th")]
    assert len(cells) == 15 and all(blocks[i].text_chars < rules.NESTED_MIN_CHARS for i in cells)
    assert rules.nested_blocks(blocks, kept) == cells
    # A table of links (related stories) is links, and a table after the body's last paragraph closes nothing.
    linked = page.replace("<td>", "<td><a href='/s'>").replace("</td>", "</a></td>")
    linked_blocks = page_blocks(parse_html(linked))
    assert rules.nested_blocks(linked_blocks, [b.index == body for b in linked_blocks]) == []
    after = page.replace("<p>North Dakota leads for the second year.</p>", "")
    after_blocks = page_blocks(parse_html(after))
    assert rules.nested_blocks(after_blocks, [b.index == body for b in after_blocks]) == []


def test_unsure_blocks_outside_the_main_region_are_dropped(monkeypatch: pytest.MonkeyPatch) -> None:
    # A blog post (headline and body in one container) beside a blogroll and a box of recent posts, on a
    # page typed list: the stacked model keeps the sidebars at a low threshold (Dragnet R263, Typepad).
    page = ("<html><body><div id='side'><ul class='blogroll'><li><a href='/a'>A friend's blog</a></li></ul>"
            "<div class='recent'><p>Recent posts: notes from the week.</p></div></div>"
            "<div id='post'><h2 class='title'>On bosses</h2><div class='entry-body'><p>I spent the morning "
            "reading the mail that came in while I was away.</p></div></div></body></html>")
    blocks = page_blocks(parse_html(page))
    index = {str(b.element.get("class") or b.element.get("id")): b.index for b in blocks}
    body, title, roll, recent = index["entry-body"], index["post"], index["blogroll"], index["recent"]
    kept = [True] * len(blocks)

    def probabilities(**given: float) -> np.ndarray:
        values = np.full(len(blocks), 0.3, dtype=np.float32)
        for name, value in given.items():
            values[index[name.replace("_", "-")]] = value
        return values

    # The body is sure (0.95): the region is the post's <div> (the headline's block, and the body); the unsure
    # sidebars go.
    assert rules.outside_main_region(blocks, probabilities(entry_body=0.95), kept) == sorted([roll, recent])
    # A sidebar the model is sure enough of (0.6) stays; so does the headline inside the region, however unsure.
    assert rules.outside_main_region(blocks, probabilities(entry_body=0.95, recent=0.6), kept) == [roll]
    assert title not in rules.outside_main_region(blocks, probabilities(entry_body=0.95, post=0.1), kept)
    # No sure main block, or a sure block in the sidebar too (the region would be <body>): nothing is dropped.
    assert rules.outside_main_region(blocks, probabilities(entry_body=0.7), kept) == []
    assert rules.outside_main_region(blocks, probabilities(entry_body=0.95, recent=0.9), kept) == []
    # Blocks not kept are not the rule's to drop.
    assert rules.outside_main_region(blocks, probabilities(entry_body=0.95),
                                          [b.index in (body, title) for b in blocks]) == []
    assert body not in rules.outside_main_region(blocks, probabilities(entry_body=0.95), kept)
    # A block of an ancestor of the region (text straight in <body>, around the post) is not beside it: it stays.
    around = page.replace("<body>", "<body>Notes straight in the body, around the post.")
    around_blocks = page_blocks(parse_html(around))
    body_block = next(b.index for b in around_blocks if b.element.tag == "body")
    around_scores = np.full(len(around_blocks), 0.3, dtype=np.float32)
    around_scores[next(b.index for b in around_blocks if b.element.get("class") == "entry-body")] = 0.95
    dropped = rules.outside_main_region(around_blocks, around_scores, [True] * len(around_blocks))
    assert body_block not in dropped and len(dropped) == 2
    # In classify, after the model's decision (every block over a 0.25 threshold): counted, the post's text left.
    models = classifier.shared_models()
    assert models.stack is not None
    low = replace(models, stack=replace(models.stack, type_thresholds=(0.25, 0.25, 0.25)))
    scores = probabilities(entry_body=0.95)
    monkeypatch.setattr(classifier._StackModel, "content_probability", lambda self, rows: scores)
    decision = classify(parse_html(page), low, page_probabilities=[0.1, 0.8, 0.1], trim=False)
    assert decision.outside == 2 and decision.text == "On bosses\nI spent the morning reading the mail that came " \
        "in while I was away."


def test_unsure_blocks_after_the_declared_article_body_are_dropped(monkeypatch: pytest.MonkeyPatch) -> None:
    # A news page: headline and lead above the CMS's declared body, an author box and related posts after it.
    lead = "<p class='lead'>The council voted on Tuesday to close the old bridge for a year of repairs.</p>"
    body = ("<div class='post entry-content clearfix'><p>The bridge, built in 1931, carries twelve thousand cars a "
            "day. Engineers found cracks in two of its piers in the spring, and the council asked for a full "
            "survey.</p><p>Traffic will go by the ring road while the work lasts, the mayor said, and buses will "
            "run every ten minutes between the two banks.</p></div>")
    after = ("<div class='author'><p>Jane Doe writes about the city for the paper.</p></div>"
             "<div class='related'><p>Read also: the ring road's new lanes open next week.</p></div>")
    page = f"<html><body><h1 class='headline'>Old bridge to close</h1>{lead}{body}{after}</body></html>"

    def dropped(html_text: str, kept_only: tuple[str, ...] = (), **given: float) -> list[str]:
        blocks = page_blocks(parse_html(html_text))
        names = [str(b.element.get("class") or b.element.tag).split()[-1] for b in blocks]
        values = np.array([given.get(name, 0.3) for name in names], dtype=np.float32)
        kept = [not kept_only or name in kept_only for name in names]
        return [names[i] for i in rules.after_article_body(blocks, values, kept)]

    # The author box and the related posts go; the headline and the lead before the body stay.
    assert dropped(page) == ["author", "related"]
    # A block after the body the model is sure enough of stays; so do blocks not kept.
    assert dropped(page, author=0.6) == ["related"]
    assert dropped(page, kept_only=("clearfix", "headline")) == []
    # Nested marks (Blogger's post-body around its post-content) are one body.
    nested = page.replace(body, f"<div class='post-body'>{body}</div>")
    assert dropped(nested) == ["author", "related"]
    # No declared body: nothing is dropped, nor when a class only contains the words (entry-content-wrapper), when
    # the body holds a teaser's text only, or when the page has several bodies apart (a blog's index of posts).
    assert dropped(page.replace("entry-content", "story")) == []
    assert dropped(page.replace("entry-content", "entry-content-wrapper")) == []
    assert dropped(page.replace(body, "<div class='entry-content'><p>The bridge closes.</p></div>")) == []
    assert dropped(page.replace(after, body.replace("1931", "1932") + after)) == []
    # itemprop="articleBody" declares it too.
    assert dropped(page.replace("class='post entry-content clearfix'", "itemprop='articleBody'")) == [
        "author", "related"]
    # Teaser cards of other stories after the body go however sure the model is: three or more blocks of one
    # tag and class, each short with a link. Two are not a run; cards without a link are text.
    card = "<div class='card'><p>May 2 <a href='/{0}'>Story {0} of the week</a> What the council said.</p></div>"
    cards = "".join(card.format(n) for n in range(3))
    assert dropped(page.replace(after, cards), card=0.9) == ["card"] * 3
    assert dropped(page.replace(after, "".join(card.format(n) for n in range(2))), card=0.9) == []
    assert dropped(page.replace(after, cards.replace("<a href", "<b href").replace("</a>", "</b>")), card=0.9) == []
    # In classify, after the model's decision (every block over a 0.25 threshold): counted, the article left.
    models = classifier.shared_models()
    assert models.stack is not None
    low = replace(models, stack=replace(models.stack, type_thresholds=(0.25, 0.25, 0.25)))
    blocks = page_blocks(parse_html(page))
    scores = np.array([0.6 if "entry-content" in (b.element.get("class") or "") else 0.3 for b in blocks],
                      dtype=np.float32)
    monkeypatch.setattr(classifier._StackModel, "content_probability", lambda self, rows: scores)
    decision = classify(parse_html(page), low, page_probabilities=[0.8, 0.1, 0.1], trim=False)
    assert decision.after_body == 2
    assert decision.text.startswith("Old bridge to close\nThe council voted") and "Jane Doe" not in decision.text
    assert decision.text.endswith("between the two banks.")


def test_the_lead_a_page_names_before_its_main_block_is_kept(monkeypatch: pytest.MonkeyPatch) -> None:
    # A news page's header: headline, the lead in a named container, then the body the model kept.
    lead = ("<div class='article__intro'><p>The council voted on Tuesday to close the old bridge for a year of "
            "repairs.</p></div>")
    body = _STORY
    page = f"<html><body><h1>Old bridge to close</h1>{lead}{body}</body></html>"

    def added(html_text: str) -> list[str]:
        blocks = page_blocks(parse_html(html_text))
        kept = [b.element.get("class") == "story" for b in blocks]
        return [blocks[i].text for i in rules.lead_blocks(blocks, kept)]

    lead_text = "The council voted on Tuesday to close the old bridge for a year of repairs."
    assert added(page) == [lead_text]
    # The name's other spellings: camelCase, a generic word after it, on the element or up to two levels above.
    for name in ("leadIn", "a-lead", "intro-text", "header-dek-wrapper", "texto-bajada", "DefaultEinleitung"):
        assert added(page.replace("article__intro", name)) == [lead_text], name

    def wrapped(levels: int) -> str:
        return page.replace("<p>The council", "<div>" * levels + "<p>The council").replace(
            "repairs.</p>", "repairs.</p>" + "</div>" * levels)

    assert added(wrapped(2)) == [lead_text]
    assert added(wrapped(3)) == []
    # The block may be the lead's wrapper, the named paragraph most of its text (a label beside it): the block is
    # kept when the named paragraph ends a sentence. Not when the paragraph is under half of the block's text.
    plain = "<div class='head'><p class='intro'>The council voted on Tuesday to close the old bridge for a year of " \
        "repairs.</p> <span>More on this</span></div>"
    assert added(page.replace(lead, plain)) == [lead_text + "\nMore on this"]
    assert added(page.replace(lead, plain.replace("More on this", "More on this story from the council " * 3))) == []
    # Not a lead: the word inside a longer name, no name, a line that is no sentence (a headline, a credit), a
    # teaser cut off, a line of links, or a block after the main one.
    for name in ("summary-credit", "NavPromoDrawer-module_intro__uvMjk", "cart__intro-item", "story-top"):
        assert added(page.replace("article__intro", name)) == [], name
    assert added(page.replace("repairs.</p>", "repairs by the city</p>")) == []
    assert added(page.replace("repairs.</p>", "repairs and...</p>")) == []
    assert added(page.replace("<p>The council voted", "<p><a href='/c'>The council voted</a>")) == []  # 22% links
    assert added(page.replace(lead, "").replace("</div></body>", f"</div>{lead}</body>")) == []
    # In classify: on a page typed article, counted; not on a list page.
    models = classifier.shared_models()
    assert models.stack is not None
    blocks = page_blocks(parse_html(page))
    scores = np.array([0.9 if b.element.get("class") == "story" else 0.1 for b in blocks], dtype=np.float32)
    monkeypatch.setattr(classifier._StackModel, "content_probability", lambda self, rows: scores)
    decision = classify(parse_html(page), models, page_probabilities=[0.9, 0.05, 0.05], trim=False)
    assert decision.lead == 1 and decision.text.startswith(lead_text)
    listing = classify(parse_html(page), models, page_probabilities=[0.05, 0.9, 0.05], trim=False)
    assert listing.lead == 0 and lead_text not in listing.text


def test_kept_blocks_in_a_container_named_related_are_dropped(monkeypatch: pytest.MonkeyPatch) -> None:
    # An article in a wrapper that happens to say "related", a box of related stories after it.
    body = _STORY
    box = ("<div class='jp-relatedposts'><div class='item'><p><a href='/r'>Ring road lanes open</a> The two new "
           "lanes open next week, the city says.</p></div></div>")
    page = f"<html><body><div class='post related-topics'><h1>Old bridge to close</h1>{body}</div>{box}</body></html>"

    def dropped(html_text: str) -> list[str]:
        return _dropped_texts(rules.named_related, html_text)

    assert dropped(page) == ["Ring road lanes open The two new lanes open next week, the city says."]
    for name in ("class='mostPopular'", "id='related'", "class='outbrain-widget'", "class='td-related-posts'",
                 "class='recent_mu_posts'"):
        assert len(dropped(page.replace("class='jp-relatedposts'", name))) == 1, name
    # Not a name: a word inside another ("unrelated"), WordPress's category classes, a heading's slug id.
    for name in ("class='unrelated'", "class='post category-popular'", "id='how-popular-is-the-bridge'"):
        assert dropped(page.replace("class='jp-relatedposts'", name)) == [], name
    # A newsletter's sign-up box after the article goes the same way.
    signup = ("<div class='newsletter-signup'><p>Get the city's news in your inbox every morning: sign up for our "
              "newsletter.</p></div>")
    assert dropped(page.replace(box, signup)) == [
        "Get the city's news in your inbox every morning: sign up for our newsletter."]
    for name in ("id='mc_embed_signup'", "class='optin-form'", "class='subscribe-box'", "class='NewsletterBox'"):
        assert len(dropped(page.replace(box, signup.replace("class='newsletter-signup'", name)))) == 1, name
    assert dropped(page.replace(box, signup.replace("newsletter-signup", "subscriber-note"))) == []
    # So does the author's box: a bio after the post.
    bio = "<div class='about-author'><p>Jane Doe covers the city council and its bridges for the paper.</p></div>"
    assert dropped(page.replace(box, bio)) == ["Jane Doe covers the city council and its bridges for the paper."]
    for name in ("class='author-bio'", "class='postauthor'", "id='author'", "class='authorBio'"):
        assert len(dropped(page.replace(box, bio.replace("class='about-author'", name)))) == 1, name
    assert dropped(page.replace(box, bio.replace("about-author", "authority-note"))) == []
    # And share buttons' labels (Jetpack's "Like this:").
    likes = "<div class='sharedaddy sd-like'><p>Like this: Be the first to like this.</p></div>"
    assert dropped(page.replace(box, likes)) == ["Like this: Be the first to like this."]
    assert len(dropped(page.replace(box, likes.replace("sharedaddy sd-like", "share-buttons")))) == 1
    # A named box inside the article's body holds more text than the body (a slideshow's captions): the body's block,
    # whose element holds the box, is the main one, and the captions go. Not when the body has under 200 characters
    # of its own (ARTICLE_BODY_MIN_CHARS): then the box may be the article, and it stays.
    captions = "".join(f"<li><p>Photo {n}: the old bridge's piers seen from the river bank at dawn, before the "
                       f"survey began.</p></li>" for n in range(1, 6))
    inner = _STORY.replace("</p><p>Traffic", f"</p><div class='promo_holder'><ul class='slideshow'>{captions}</ul>"
                           "</div><p>Traffic")
    page_inner = f"<html><body><h1>Old bridge to close</h1>{inner}</body></html>"
    gone = dropped(page_inner)
    assert len(gone) == 1 and gone[0].startswith("Photo 1: the old bridge's piers") and gone[0].endswith("began.")
    short = inner.replace(" Engineers found cracks in two of its piers in the spring, and the council asked for a "
                          "full survey.", "")
    assert dropped(page_inner.replace(inner, short)) == []
    # A bio after a short post, longer than the post: given the model's probabilities, the post in its declared body
    # ("entry-content", at least 0.5 probable) is the main block and the bio goes.
    long_bio = bio.replace("for the paper.", "for the paper. " + "She reports on the city's roads since 2009. " * 5)
    short_post = "<html><body><h1>Old bridge to close</h1>" + body.replace("'story'", "'entry-content'") + long_bio \
        + "</body></html>"
    assert dropped(short_post) == []
    short_blocks = page_blocks(parse_html(short_post))
    for probability, gone in ((0.9, 1), (0.4, 0)):
        scores = np.full(len(short_blocks), probability, dtype=np.float32)
        assert len(rules.named_related(short_blocks, [True] * len(short_blocks), scores)) == gone, probability
    # In classify: on a page typed article, counted; not on a list page.
    models = classifier.shared_models()
    assert models.stack is not None
    monkeypatch.setattr(classifier._StackModel, "content_probability",
                        lambda self, rows: np.full(len(rows), 0.9, dtype=np.float32))
    decision = classify(parse_html(page), models, page_probabilities=[0.9, 0.05, 0.05], trim=False)
    assert decision.related == 1 and "Ring road" not in decision.text and decision.text.endswith("the mayor said.")
    listing = classify(parse_html(page), models, page_probabilities=[0.05, 0.9, 0.05], trim=False)
    assert listing.related == 0 and "Ring road" in listing.text


def test_kept_lists_of_links_apart_from_the_main_block_are_dropped(monkeypatch: pytest.MonkeyPatch) -> None:
    # A post in its column, a blogroll of headlines in another (not named a sidebar: ``named_sidebars``), a list of
    # links inside the post's container.
    body = _STORY
    sources = "<ul class='sources'><li><a href='/s1'>Survey</a></li><li><a href='/s2'>Minutes</a></li>" \
              "<li><a href='/s3'>Traffic plan</a></li></ul>"
    roll = ("<ul class='roll'><li><a href='/a'>Ring road lanes open next week</a></li><li><a href='/b'>Council "
            "votes on the budget</a></li><li><a href='/c'>New bus line to the airport</a></li></ul>")
    page = (f"<html><body><div class='main'><div class='column'><div class='post'><h1>Old bridge to close</h1>{body}"
            f"{sources}</div></div></div><div class='column'><div class='widget'>{roll}</div></div></body></html>")

    def dropped(html_text: str) -> list[str]:
        return [block.element.get("class") for block in _dropped_by(rules.link_lists, html_text)]

    # The sidebar's list goes; the sources in the post's own container stay.
    assert dropped(page) == ["roll"]
    # Two lines are not a list; a line that is not a link makes it text.
    assert dropped(page.replace("<li><a href='/c'>New bus line to the airport</a></li>", "")) == []
    assert dropped(page.replace("<a href='/c'>New bus line to the airport</a>",
                                "New bus line to the airport, the council says")) == []
    # In classify: on a page typed article, counted; not on a list page.
    models = classifier.shared_models()
    assert models.stack is not None
    monkeypatch.setattr(classifier._StackModel, "content_probability",
                        lambda self, rows: np.full(len(rows), 0.9, dtype=np.float32))
    decision = classify(parse_html(page), models, page_probabilities=[0.9, 0.05, 0.05], trim=False)
    assert decision.link_lists == 1 and decision.rule_counts()["link_lists"] == 1
    assert "Ring road" not in decision.text and "Traffic plan" in decision.text
    listing = classify(parse_html(page), models, page_probabilities=[0.05, 0.9, 0.05], trim=False)
    assert listing.link_lists == 0 and not listing.read_as_article and "Ring road" in listing.text
    # A page typed list that declares its article body (WordPress's entry-content) is read as an article.
    post = page.replace("<div class='story'>", "<div class='entry-content'>")
    blog = classify(parse_html(post), models, page_probabilities=[0.05, 0.9, 0.05], trim=False)
    assert blog.read_as_article and blog.link_lists == 1 and blog.rule_counts()["read_as_article"] == 1
    assert "Ring road" not in blog.text


def test_other_posts_excerpts_in_their_own_declared_bodies_are_dropped(monkeypatch: pytest.MonkeyPatch) -> None:
    # Dragnet T6: a post, and recent posts' excerpts before and after it, each in its own entry-content.
    post = " ".join(["The council voted to rebuild the old bridge over the river, and the work starts in May."] * 8)

    def excerpt(n: int) -> str:
        return (f"<div class='post'><h2><a href='/p{n}'>Earlier post {n}</a></h2><div class='entry-content'><p>An "
                f"excerpt of the earlier post number {n}, a few sentences about the town's week.</p></div></div>")

    page = (f"<html><body>{excerpt(1)}{excerpt(2)}<div class='post'><h1>Bridge</h1><div class='entry-content'>"
            f"<p>{post}</p></div></div>{excerpt(3)}</body></html>")

    def dropped(html_text: str) -> str:
        return "\n".join(block.text for block in _dropped_by(rules.teaser_bodies, html_text))

    gone = dropped(page)
    assert all(f"post number {n}" in gone for n in (1, 2, 3)) and "rebuild" not in gone
    # One other body is a lead the page marks apart, not a run of excerpts; bodies of like size are an index.
    assert dropped(page.replace(excerpt(1), "").replace(excerpt(2), "")) == ""
    assert dropped(page.replace(post, "A short post about the bridge and the vote.")) == ""
    # In classify: counted on a page typed article.
    models = classifier.shared_models()
    monkeypatch.setattr(classifier._StackModel, "content_probability",
                        lambda self, rows: np.full(len(rows), 0.9, dtype=np.float32))
    decision = classify(parse_html(page), models, page_probabilities=[0.9, 0.05, 0.05], trim=False)
    assert decision.teasers == 3 and decision.rule_counts()["teasers"] == 3
    assert "rebuild" in decision.text and "post number" not in decision.text


def test_the_one_declared_body_the_model_kept_none_of_is_kept(monkeypatch: pytest.MonkeyPatch) -> None:
    # trafilatura-eval's knowledge-on-air.de: the model kept the author box and none of the short post.
    post = ("<div class='entry-content'><p>We recorded the camp's sessions live in Berlin this year, and the "
            "guests told us what they took home from two days of talks.</p><p>Listen to the episode below.</p></div>")
    author = "<div class='author'><p>About the author: a teacher of knowledge management for twenty years.</p></div>"
    page = f"<html><body><h1>Live from the camp</h1>{post}{author}</body></html>"

    def missed(html_text: str, keep: str = "author") -> list[str]:
        blocks = page_blocks(parse_html(html_text))
        kept = [block.element.get("class") == keep for block in blocks]
        return [str(blocks[i].element.get("class")) for i in rules.missed_body(blocks, kept)]

    assert missed(page) == ["entry-content"]
    # Not when the model kept some of the body, nor kept nothing at all; not on a page of several bodies.
    assert missed(page, keep="entry-content") == [] and missed(page, keep="none") == []
    assert missed(page.replace(author, post.replace("live in Berlin", "in Hamburg"))) == []
    # Not a body of links or of a few words.
    links = "".join(f"<li><a href='/e{n}'>Episode {n} of the camp podcast, with guests</a></li>" for n in range(6))
    assert missed(page.replace("<p>Listen to the episode below.</p>", f"<ul>{links}</ul>")) == []
    assert missed(page.replace(post, "<div class='entry-content'><p>Listen below.</p></div>")) == []
    # In classify: counted on a page typed article.
    models = classifier.shared_models()
    monkeypatch.setattr(classifier._StackModel, "content_probability",
                        lambda self, rows: np.array([0.9 if "teacher" in block.text else 0.1
                                                     for block in page_blocks(parse_html(page))], dtype=np.float32))
    decision = classify(parse_html(page), models, page_probabilities=[0.9, 0.05, 0.05], trim=False)
    assert decision.missed_body == 1 and decision.rule_counts()["missed_body"] == 1
    assert "live in Berlin" in decision.text and "teacher" in decision.text


def test_the_dropped_block_around_the_main_block_with_more_text_is_kept(monkeypatch: pytest.MonkeyPatch) -> None:
    # A post whose text the model dropped, while it kept the quote inside it.
    quote = "<blockquote>One million entrepreneurs by the year 2030, the initiative says.</blockquote>"
    post = (f"<html><body><div class='nav'><a href='/'>Home</a></div><div class='entry'><p>Posted Friday: the "
            f"interview with the founder of the initiative, who spoke about the first year and the plans for the "
            f"next.</p>{quote}<p>Listen to it on the podcast's page.</p></div></body></html>")

    def kept_around(html_text: str, kept_class: str | None = None) -> list[str]:
        blocks = page_blocks(parse_html(html_text))
        kept = [b.element.tag == "blockquote" or (kept_class is not None and b.element.get("class") == kept_class)
                for b in blocks]
        return [str(blocks[i].element.get("class")) for i in rules.enclosing_block(blocks, kept)]

    assert kept_around(post) == ["entry"]
    # Less text around the quote than in it, or links: the quote is the page's text, nothing added.
    assert kept_around(post.replace("Posted Friday: the interview with the founder of the initiative, who spoke "
                                    "about the first year and the plans for the next.", "Posted Friday.")) == []
    linked = post.replace("<p>Posted Friday", "<p><a href='/x'>Posted Friday").replace("next.</p>", "next.</a></p>")
    assert kept_around(linked) == []
    # Text straight in <body> is not an article's; an enclosing block already kept is not added.
    assert kept_around(post.replace("<div class='entry'>", "").replace("</div></body>", "</body>")) == []
    assert kept_around(post, kept_class="entry") == []
    # A recipe (Dragnet R114): the kept recipe's <div> in a dropped title box with less text than it, in the post's
    # dropped <div>: both blocks around it are kept; a third level is not read.
    recipe = "<div class='recipe'><p>" + "One cup of flour, two eggs, a pinch of salt. " * 3 + "</p></div>"
    for box, found in ((f"<div class='printable'><p>Rolls, makes 8.</p>{recipe}</div>", ["entry", "printable"]),
                       ("<div class='printable'><p>Print it.</p><div class='card'><p>Rolls, makes 8.</p>"
                        f"{recipe}</div></div>", [])):
        blocks = page_blocks(parse_html(post.replace(quote, box)))
        kept = [b.element.get("class") == "recipe" for b in blocks]
        assert [blocks[i].element.get("class") for i in rules.enclosing_block(blocks, kept)] == found
    # In classify: counted.
    models = classifier.shared_models()
    assert models.stack is not None
    blocks = page_blocks(parse_html(post))
    scores = np.array([0.9 if b.element.tag == "blockquote" else 0.1 for b in blocks], dtype=np.float32)
    monkeypatch.setattr(classifier._StackModel, "content_probability", lambda self, rows: scores)
    decision = classify(parse_html(post), models, page_probabilities=[0.1, 0.1, 0.8], trim=False)
    assert decision.enclosing == 1 and decision.text.startswith("Posted Friday") and "Home" not in decision.text


def test_a_kept_block_that_repeats_a_kept_blocks_text_is_dropped(monkeypatch: pytest.MonkeyPatch) -> None:
    # A shop sends its description twice, for the phone and for the desktop (WCXB-dev 0610); a short line (a
    # price, a button) repeats on purpose.
    description = ("Make each cup of tea or coffee feel special with a ceramic mug: wheel thrown, matte textured, "
                   "with a clear glazed interior.")
    price = "<div class='price'><p>$60.00, free delivery</p></div>"
    page = (f"<html><body><h1>White speckle mug</h1>{price}<div class='mobile'><p>{description}</p></div>"
            f"<h2>Details</h2>{price}<div class='desktop'><p>{description}</p></div></body></html>")
    blocks = page_blocks(parse_html(page))
    texts = [b.text for b in blocks]
    assert texts.count(description) == 2 and texts.count("$60.00, free delivery") == 2
    every = [True] * len(blocks)
    assert [blocks[i].element.get("class") for i in rules.repeated_blocks(blocks, every)] == ["desktop"]
    # Only kept blocks count: a dropped first copy leaves the second.
    first = next(i for i, b in enumerate(blocks) if b.text == description)
    assert rules.repeated_blocks(blocks, [i != first for i in range(len(blocks))]) == []
    # In classify: counted, and the text has the description once.
    models = classifier.shared_models()
    monkeypatch.setattr(classifier._StackModel, "content_probability",
                        lambda self, rows: np.full(len(blocks), 0.9, dtype=np.float32))
    decision = classify(parse_html(page), models, page_probabilities=[0.1, 0.1, 0.8], trim=False)
    assert decision.repeats == 1 and decision.rule_counts()["repeats"] == 1
    assert decision.text.count(description) == 1 and decision.text.count("$60.00, free delivery") == 2


def test_a_kept_blocks_trailing_link_lines_are_trimmed_except_on_list_pages(monkeypatch: pytest.MonkeyPatch) -> None:
    # An article's body block ending in "read also" and tag lines, and a link line in its middle.
    body = ("<div class='story'><p>The council voted on Tuesday to close the old bridge for a year of repairs, after "
            "engineers found cracks in two of its piers.</p><p>See <a href='/a'>the engineers' report</a> for the "
            "survey.</p><p>Traffic will go by the ring road while the work lasts, the mayor said.</p>"
            "<p><a href='/b'>Read also: the ring road's new lanes open next week</a></p>"
            "<p>Tags: <a href='/t1'>bridge</a> <a href='/t2'>council</a></p></div>")
    page = f"<html><body><h1>Old bridge to close</h1>{body}</body></html>"
    block = next(b for b in page_blocks(parse_html(page)) if b.element.get("class") == "story")
    texts = [paragraph.text for paragraph in block.paragraphs]
    assert len(texts) == 5 and texts[3].startswith("Read also") and texts[4].startswith("Tags")

    def trimmed(flags: list[bool]) -> list[str]:
        return [t for t, keep in zip(texts, rules.trim_link_tail(block.paragraphs, flags), strict=True) if keep]

    # The tail's link lines go (the tag line is 45% links: under LINK_TAIL_DENSITY, so it ends the run and the
    # read-also line above it stays); the middle line with a link stays.
    assert trimmed([True] * 5) == texts
    assert trimmed([True, True, True, True, False]) == texts[:3]
    # A link line kept alone, or first, stays: the block was judged content.
    assert trimmed([False, False, False, True, False]) == [texts[3]]
    assert trimmed([False, False, True, True, False]) == [texts[2]]
    # A tail as long as the text above it is no tail: a block of mostly link lines (a table of contents) stays.
    assert trimmed([False, True, False, True, False]) == [texts[1], texts[3]]
    # In classify: trimmed on an article page, not on a list page (its entries are link lines), decided by the
    # page-type probabilities or given by the caller (the crawl's site evidence).
    listing = page.replace("<p>Tags: <a href='/t1'>bridge</a> <a href='/t2'>council</a></p>", "")
    models = classifier.shared_models()
    assert models.stack is not None
    monkeypatch.setattr(classifier._StackModel, "content_probability",
                        lambda self, rows: np.full(len(rows), 0.9, dtype=np.float32))
    monkeypatch.setattr(classifier, "trim_ends_lazily",
                        lambda features, probability, threshold: [[True] * len(rows) for rows in features])
    decision = classify(parse_html(listing), models, page_probabilities=[0.9, 0.05, 0.05])
    assert decision.text.endswith("the mayor said.") and "Read also" not in decision.text
    assert decision.link_tail == 1
    for probabilities, page_type in (([0.05, 0.9, 0.05], None), ([0.9, 0.05, 0.05], "list")):
        text = classify(parse_html(listing), models, page_probabilities=probabilities, page_type=page_type).text
        assert text.endswith("Read also: the ring road's new lanes open next week")
    # The SVM alone (paper 003's flow, the svm method) trims ends by its paragraph model only.
    monkeypatch.setattr(classifier._Model, "content_probability",
                        lambda self, rows: np.full(len(rows), 0.9, dtype=np.float32))
    assert "Read also" in classify(parse_html(listing), models, stack=False).text


def test_a_dropped_block_like_its_kept_siblings_is_kept() -> None:
    body = "".join(f"<div class='text-block'><p>{COMMENTS[i % 2]} Paragraph {i}.</p></div>" for i in range(4))
    page = (f"<html><body><div id='menu'><a href='/a'>Home</a> <a href='/b'>World</a></div><div class='story'>{body}"
            "</div><div class='story-footer'><a href='/x'>More</a></div></body></html>")
    blocks = page_blocks(parse_html(page))
    paragraphs = [b.index for b in blocks if b.element.get("class") == "text-block"]
    assert len(paragraphs) == 4
    kept = [b.index in paragraphs[:3] for b in blocks]  # the last paragraph dropped, its three siblings kept
    assert rules.sibling_blocks(blocks, kept) == [paragraphs[3]]
    links = [b.index for b in blocks if b.link_chars]  # link-heavy blocks are never pulled in
    assert not set(rules.sibling_blocks(blocks, [not keep for keep in kept])) & set(links)
    assert rules.sibling_blocks(blocks, [b.index == paragraphs[0] for b in blocks]) == []  # one is not a run


def test_kept_blocks_in_a_container_named_as_a_sidebar_are_dropped(monkeypatch: pytest.MonkeyPatch) -> None:
    # A post in a layout "with sidebar", a WordPress sidebar of widgets beside it (its archive by month).
    body = _STORY
    side = ("<div id='sidebar'><ul><li class='widget widget_archive'><h2>Archives</h2><ul><li><a href='/2012/11'>"
            "November 2012</a></li><li><a href='/2012/10'>October 2012</a></li></ul></li></ul></div>")
    page = f"<html><body><div class='content has-sidebar'><h1>Old bridge to close</h1>{body}</div>{side}</body></html>"

    def dropped(html_text: str) -> list[str]:
        return _dropped_texts(rules.named_sidebars, html_text)

    assert dropped(page) == ["Archives", "November 2012\nOctober 2012"]
    for name in ("class='side-bar'", "class='widget-area'", "id='right-sidebar'"):
        assert len(dropped(page.replace("id='sidebar'", name))) == 2, name
    # No sidebar's name: a layout's ("no-sidebar"), a widget of a page builder, an <aside> (an article's note).
    for name in ("class='no-sidebar'", "class='content-sidebar-wrap'", "class='elementor-widget'", "class='widget'"):
        assert dropped(page.replace("id='sidebar'", name)) == [], name
    aside = page.replace("<div id='sidebar'>", "<aside>").replace("</ul></div></body>", "</ul></aside></body>")
    assert dropped(aside) == []
    # A sidebar whose widgets outweigh a short post holds the longest block. Given the model's probabilities, the post
    # is the main block when it lies in the page's declared article body ("entry-content") and is at least 0.5
    # probable; a block outside the sidebar that is neither (a header, a layout named "sidebar" around the post) is not.
    about = "<li class='widget'><p>" + "About me: I write on bridges, roads and the city's budget. " * 4 + "</p></li>"
    heavy = page.replace("<ul><li class='widget widget_archive'>", f"<ul>{about}<li class='widget widget_archive'>")
    declared = heavy.replace("<div class='story'>", "<div class='entry-content'>")
    assert dropped(declared) == []  # without the probabilities: the sidebar holds the main block, nothing goes

    def dropped_with(probability: float, html_text: str = declared) -> list[str]:
        blocks = page_blocks(parse_html(html_text))
        probabilities = np.full(len(blocks), probability, dtype=np.float32)
        return [blocks[i].text for i in rules.named_sidebars(blocks, [True] * len(blocks), probabilities)]

    sidebar = dropped_with(0.9)
    assert len(sidebar) == 2 and sidebar[0].startswith("About me") and sidebar[1] == "November 2012\nOctober 2012"
    assert dropped_with(0.4) == []
    assert dropped_with(0.9, heavy) == []  # no declared body: the sidebar's longest block stays the main one
    # In classify: on every page type (a blog post typed list keeps its sidebars otherwise).
    models = classifier.shared_models()
    assert models.stack is not None
    monkeypatch.setattr(classifier._StackModel, "content_probability",
                        lambda self, rows: np.full(len(rows), 0.9, dtype=np.float32))
    for probabilities in ([0.9, 0.05, 0.05], [0.05, 0.9, 0.05]):
        decision = classify(parse_html(page), models, page_probabilities=probabilities, trim=False)
        assert decision.sidebars == 2 and "November 2012" not in decision.text, probabilities


def test_headings_at_the_end_of_the_text_are_dropped(monkeypatch: pytest.MonkeyPatch) -> None:
    # A post, then the headings of a related-posts box and a reply form whose other text the model dropped.
    tail = "<div class='after'><h3>Related posts:</h3><h3 id='reply-title'>Leave a Reply</h3></div>"
    page = f"<html><body><div class='post'><h1>Old bridge to close</h1>{_STORY}</div>{tail}</body></html>"

    def dropped(html_text: str) -> list[str]:
        root = parse_html(html_text)
        blocks = page_blocks(root)
        kept, paragraphs = [True] * len(blocks), [[True] * len(block.paragraphs) for block in blocks]
        return [blocks[i].paragraphs[j].text for i, j in rules.trailing_headings(root, blocks, kept, paragraphs)]

    assert dropped(page) == ["Leave a Reply", "Related posts:"]
    # A heading before the end, one that ends like a sentence, and the text's only line stay.
    assert dropped(page.replace("</div></body>", "<p>Comments are closed.</p></div></body>")) == []
    assert dropped(page.replace("Leave a Reply", "The bridge reopens in May.")) == []
    assert dropped("<html><body><h2>Only a heading</h2></body></html>") == []
    # A short paragraph that ends with a colon introduces a dropped section too; a long one is prose.
    assert dropped(page.replace(tail, "<p>Lesen Sie auch:</p>")) == ["Lesen Sie auch:"]
    assert dropped(page.replace(tail, "<p>相关阅读：</p>")) == ["相关阅读："]
    prose = "<p>The council gave three reasons for closing the old bridge for the winter:</p>"
    assert dropped(page.replace(tail, prose)) == []
    # More than TRAILING_HEADINGS_MAX in a row are a list's items (a listicle's pictures under their headings).
    items = "".join(f"<h2>{n}. Photo of the bridge</h2><img src='/{n}.jpg'>" for n in range(1, 6))
    assert dropped(page.replace(tail, f"<div class='after'>{items}</div>")) == []
    # In classify: on a page typed article, counted; not on a list page.
    models = classifier.shared_models()
    assert models.stack is not None
    monkeypatch.setattr(classifier._StackModel, "content_probability",
                        lambda self, rows: np.full(len(rows), 0.9, dtype=np.float32))
    # ("Leave a Reply" alone after the post is a flat thread's heading, which flat_threads drops first on articles.)
    shared = page.replace("Leave a Reply", "Share this story")
    decision = classify(parse_html(shared), models, page_probabilities=[0.9, 0.05, 0.05], trim=False)
    assert decision.headings == 2 and decision.text.endswith("the mayor said.")
    listing = classify(parse_html(shared), models, page_probabilities=[0.05, 0.9, 0.05], trim=False)
    assert listing.headings == 0 and listing.text.endswith("Share this story")
    flat = classify(parse_html(page), models, page_probabilities=[0.9, 0.05, 0.05], trim=False)
    assert (flat.thread_lines, flat.headings) == (1, 1) and flat.text.endswith("the mayor said.")
    # Not on other page types: a forum's "76 Replies" are its content.
    flat_list = classify(parse_html(page), models, page_probabilities=[0.05, 0.9, 0.05], trim=False)
    assert flat_list.thread_lines == 0 and flat_list.text.endswith("Leave a Reply")

"""Hand-made pages the block classifier's and its rules' tests share."""

from __future__ import annotations

NAV_ITEMS = ("Home", "World", "Politics", "Business", "Sport", "Culture", "Science", "Opinion")


def hand_made_page() -> str:
    nav = ("<div id='menu'><ul>" + "".join(f"<li><a href='/{item.lower()}'>{item}</a></li>" for item in NAV_ITEMS)
           + "</ul></div>")
    text = (
        "<p>The city council approved a new budget on Tuesday evening after a debate that lasted more than six "
        "hours, with members arguing over school funding, road repairs and the future of the central library.</p>"
        "<p>Officials said the plan would add forty teachers next year and repair the bridge over the river, which "
        "has been closed to lorries since the spring floods damaged its supports.</p>"
        "<p>Critics on the council called the plan too expensive and warned that property taxes would have to rise "
        "again within two years unless the city found new sources of income.</p>"
        "<p>The mayor, who proposed the budget in March, said she was pleased with the result and thanked residents "
        "who had come to the public hearings to speak for and against it.</p>"
    )
    return (f"<html><head><title>Council approves budget</title></head><body>{nav}<div id='story'>"
            f"<h1>Council approves budget after six-hour debate</h1>{text}</div>"
            "<div id='footer'><a href='/about'>About us</a> <a href='/contact'>Contact</a></div></body></html>")


COMMENTS = ("I disagree with the council on this budget, the school money should have gone to the river works "
            "first, and everyone who lives near the bridge knows it.",
            "Great report. The minister should read it before the election, because the market will not wait for "
            "the storm season to pass before prices rise again.")


def page_with_comments(container: str = "<div id='story'>") -> str:
    thread = ("<div id='comments' class='comment-list'><h3>3 comments</h3>"
              + "".join(f"<div class='comment'><p class='author'>reader{i}</p><p>{text}</p></div>"
                        for i, text in enumerate(COMMENTS)) + "</div>")
    return hand_made_page().replace("<div id='story'>", container).replace("<div id='footer'>", thread
                                                                             + "<div id='footer'>")

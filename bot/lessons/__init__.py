"""Ten short lessons to learn Mus: prepared deals, scripted moves, a decision at each step (``/learn``).

:mod:`bot.lessons.model` reads the lessons (data), :mod:`bot.lessons.play` plays them through the engine,
:mod:`bot.lessons.texts` has their words in every language, :mod:`bot.lessons.progress` remembers where
each learner is, :mod:`bot.lessons.render` draws a step and :mod:`bot.lessons.tutor` runs ``/learn`` and
the lesson buttons.
"""

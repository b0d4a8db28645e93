" Vim syntax file
" Language: dagc frame graphs (.dag), language version 2
" The keyword lists follow grammar/lexer.re; tests/compiler/editor_keywords.py
" fails when the lexer has a keyword that is not here, or the other way round.
if exists("b:current_syntax")
  finish
endif

syn keyword dagStructure graph task gate resource
syn keyword dagInclude include import
syn keyword dagKeyword after on main hot fiber parallel grain call cost when run reads writes prev coro
syn keyword dagOperator and or
syn keyword dagTodo TODO FIXME XXX NOTE contained

" Resource names: those a `resource` declares and a `reads`/`writes` accesses,
" each name of a comma list on the line (after the keyword, which stays a
" keyword: syn keyword wins over syn match where both start).
syn match dagResource "\%(\<\%(resource\|reads\|writes\)\s\+\%(\h\w*\s*,\s*\)*\)\@<=\h\w*"

syn match dagDuration "\<\d\+\%(\.\d\+\)\=\%(ns\|us\|ms\|s\)\>"
syn match dagNumber "\<\d\+\>"
syn region dagString start=+"+ skip=+\\[\\"]+ end=+"+ oneline contains=dagEscape
syn match dagEscape +\\[\\"]+ contained

" The graph's context type is C (or C++): graph NAME(TYPE), parentheses nest.
syn region dagCtype matchgroup=dagDelimiter start="\%(\<graph\s\+\h\w*\s*\)\@<=(" end=")" contains=dagCtypeParen
syn region dagCtypeParen start="(" end=")" contained transparent contains=dagCtypeParen

syn match dagComment "//.*$" contains=dagTodo,@Spell
syn region dagComment start="/\*" end="\*/" contains=dagTodo,@Spell

hi def link dagStructure Structure
hi def link dagInclude Include
hi def link dagKeyword Keyword
hi def link dagOperator Operator
hi def link dagTodo Todo
hi def link dagResource Identifier
hi def link dagDuration Number
hi def link dagNumber Number
hi def link dagString String
hi def link dagEscape SpecialChar
hi def link dagCtype Type
hi def link dagDelimiter Delimiter
hi def link dagComment Comment

let b:current_syntax = "dag"

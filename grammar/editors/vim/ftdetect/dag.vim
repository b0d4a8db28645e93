" .dag files are dagc frame graphs (grammar/editors/README.md).
autocmd BufRead,BufNewFile *.dag setfiletype dag
